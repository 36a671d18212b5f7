// What a zipper-tune run measures and searches: message sizes, segment
// sizes and each point's grid (bytes throughout; 0 = unsegmented).
#pragma once

#include <cstdint>
#include <vector>

#include "../collectives/selection.h"
#include "options.h"
#include "search.h"

namespace zipper::tune {

/// from, from·factor, ... up to `to` (inclusive).
std::vector<std::uint64_t> geometric(std::uint64_t from, std::uint64_t to, unsigned factor);
/// Message sizes of the forwarded contention experiments.
std::vector<std::uint64_t> contention_sizes(bool quick);
/// Segment sizes of the search grid (0 first).
std::vector<std::uint64_t> segment_grid(bool quick);
/// Whether sizes of `c` count one block (alltoall, alltoallv), not the message.
bool per_block(coll::Collective c);
/// The sizes searched for `c` ({0} for barrier).
std::vector<std::uint64_t> search_sizes(coll::Collective c, const Options& o);
/// The grid of one point of `c` at `bytes` on layout x+y.
SearchSpace point_space(const std::vector<coll::AlgorithmTraits>& algorithms, coll::Collective c,
                        std::uint64_t bytes, int x, int y, const std::vector<std::uint64_t>& segs);

}  // namespace zipper::tune
