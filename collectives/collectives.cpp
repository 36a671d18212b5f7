#include "collectives.h"

namespace zipper::coll {
namespace {
Selection g_selection;
}  // namespace

bool init_collectives(std::string* why) {
  g_selection = Selection();
  return g_selection.load(why);
}

Selection& selection() { return g_selection; }

}  // namespace zipper::coll
