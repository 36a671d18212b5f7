// A histogram of durations (ns) with logarithmic buckets, 32 per power of
// two (a bucket is at most 1/32 = 3 % wide), so that percentiles of millions
// of messages cost a fixed 15 KiB and histograms of several processes add
// up exactly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace zipper::loadgen {

class LatencyHistogram {
 public:
  LatencyHistogram();
  void add(std::uint64_t ns);
  void merge(const LatencyHistogram& o);
  std::uint64_t count() const { return count_; }
  std::uint64_t max() const { return max_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0; }
  /// The `q`-quantile (0 < q <= 1) in ns: the middle of the bucket holding
  /// it (within 1.6 %), clamped to [min, max]; 0 when empty.
  double quantile(double q) const;

  /// Sparse form for passing between processes: counts of non-empty buckets
  /// and the exact count, sum, min and max.
  nlohmann::json to_json() const;
  /// Inverse of to_json; throws std::invalid_argument on a malformed value.
  static LatencyHistogram from_json(const nlohmann::json& j);

 private:
  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0, sum_ = 0, min_ = ~std::uint64_t{0}, max_ = 0;
};

}  // namespace zipper::loadgen
