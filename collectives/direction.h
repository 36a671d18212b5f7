// The direction of a rooted transfer: gather and scatter are one transfer
// between the root and every rank, the blocks travelling to the root or
// from it.
#pragma once

namespace zipper::coll {

enum class Direction {
  kToRoot,    // gather
  kFromRoot,  // scatter
};

}  // namespace zipper::coll
