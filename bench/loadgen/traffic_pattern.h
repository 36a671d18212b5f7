// Who sends to whom in one job of the load generator. Ranks 0..x-1 form the
// low group (one cluster), x..x+y-1 the high group (the other); every pair
// of a pattern crosses the bridge, as MPI traffic through zipperd does.
//
//   ring        low i -> high i mod y; high h -> low (h+1) mod x
//   neighbours  each rank -> `degree` consecutive ranks of the other group,
//               starting at its own position scaled to that group (sparse,
//               like a halo exchange)
//   incast      every high rank -> low rank 0
//   alltoall    every rank -> every rank of the other group
//   pingpong    low i <-> high x+i for i < min(x, y): one message out, the
//               answer back, then the next (the 8 B exchange of latency
//               benchmarks)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace zipper::loadgen {

enum class Pattern : std::uint8_t { kRing, kNeighbours, kIncast, kAllToAll, kPingPong };

std::optional<Pattern> parse_pattern(std::string_view name);
std::string_view to_string(Pattern p);

/// Directed pairs of a job of pattern `p` (what PairTable::pairs() gives),
/// without building the table.
std::uint64_t pair_count(Pattern p, std::uint32_t x, std::uint32_t y, std::uint32_t degree);

/// The directed pairs of one job. Destinations are listed in a fixed order
/// per rank; sources are indexed (src_index) so that a receiver keeps one
/// expected sequence number per source in a plain array.
class PairTable {
 public:
  /// `degree`: destinations per rank for kNeighbours (capped by the other
  /// group's size); ignored by the other patterns.
  PairTable(Pattern p, std::uint32_t x, std::uint32_t y, std::uint32_t degree);

  Pattern pattern() const { return p_; }
  std::uint32_t x() const { return x_; }
  std::uint32_t y() const { return y_; }
  bool low(std::uint32_t vrank) const { return vrank < x_; }
  std::uint32_t dest_count(std::uint32_t vrank) const;
  /// Destination `i` (< dest_count) of `vrank`.
  std::uint32_t dest(std::uint32_t vrank, std::uint32_t i) const;
  std::uint32_t src_count(std::uint32_t vrank) const;
  /// Position of `src` among the sources of `vrank`, or nullopt when `src`
  /// sends nothing to `vrank` in this pattern.
  std::optional<std::uint32_t> src_index(std::uint32_t vrank, std::uint32_t src) const;
  /// Directed pairs in the job.
  std::uint64_t pairs() const;

 private:
  Pattern p_;
  std::uint32_t x_, y_;
  // Compressed rows (all patterns but alltoall, which is arithmetic):
  // destinations of rank r at dst_[dst_off_[r] .. dst_off_[r+1]), its
  // sources, sorted, at src_[src_off_[r] ..).
  std::vector<std::uint64_t> dst_off_, src_off_;
  std::vector<std::uint32_t> dst_, src_;
};

}  // namespace zipper::loadgen
