// What a zipper-tune run measures and searches (plan.h).
#include "plan.h"

#include <algorithm>

namespace zipper::tune {

std::vector<std::uint64_t> geometric(std::uint64_t from, std::uint64_t to, unsigned factor) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = from; s <= to; s *= factor) v.push_back(s);
  return v;
}

// Message sizes of the forwarded contention experiments, bytes: a small
// (eager) one, and large ones in the rendezvous range.
std::vector<std::uint64_t> contention_sizes(bool quick) {
  return quick ? std::vector<std::uint64_t>{1024, 262144}
               : std::vector<std::uint64_t>{1024, 32768, 1048576};
}

// Segment sizes of the search grid, bytes (0 = unsegmented).
std::vector<std::uint64_t> segment_grid(bool quick) {
  std::vector<std::uint64_t> segs = {0};
  for (std::uint64_t s = quick ? 65536 : 16384; s <= (quick ? 262144u : 1u << 20); s *= 4)
    segs.push_back(s);
  return segs;
}

bool per_block(coll::Collective c) {
  return c == coll::Collective::kAlltoall || c == coll::Collective::kAlltoallv;
}

std::vector<std::uint64_t> search_sizes(coll::Collective c, const Options& o) {
  if (c == coll::Collective::kBarrier) return {0};
  const std::uint64_t top = per_block(c) ? std::min(o.max_block, o.max_bytes) : o.max_bytes;
  return o.quick
             ? std::vector<std::uint64_t>{8, 4096, 65536, std::min<std::uint64_t>(top, 1u << 20)}
             : geometric(8, top, 2);
}

// The grid of one point: a segment as large as the message is the
// unsegmented algorithm, so only smaller ones are offered (alltoall: the
// aggregated message is about x·y blocks).
SearchSpace point_space(const std::vector<coll::AlgorithmTraits>& algorithms, coll::Collective c,
                        std::uint64_t bytes, int x, int y, const std::vector<std::uint64_t>& segs) {
  SearchSpace space{algorithms, std::min(x, y), {}};
  const std::uint64_t moved = per_block(c) ? bytes * std::uint64_t(x) * y : bytes;
  for (std::uint64_t s : segs)
    if (s < moved) space.segments.push_back(s);
  return space;
}

}  // namespace zipper::tune
