#include "latency_histogram.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace zipper::loadgen {

namespace {

constexpr int kSubBits = 5;  // 32 buckets per power of two
constexpr std::uint64_t kSub = 1u << kSubBits;
constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSub;

std::size_t bucket_of(std::uint64_t v) {
  if (v < kSub) return v;
  const int e = 63 - std::countl_zero(v);  // >= kSubBits
  const std::uint64_t m = (v >> (e - kSubBits)) & (kSub - 1);
  return static_cast<std::size_t>(e - kSubBits + 1) * kSub + m;
}

// [low, high) of bucket b, as doubles (the top bucket's end exceeds 2^64).
std::pair<double, double> bounds(std::size_t b) {
  if (b < kSub) return {static_cast<double>(b), static_cast<double>(b) + 1};
  const int e = static_cast<int>(b / kSub) - 1 + kSubBits;
  const double unit = static_cast<double>(std::uint64_t{1} << (e - kSubBits));
  const double low = static_cast<double>(std::uint64_t{1} << e) + unit * (b % kSub);
  return {low, low + unit};
}

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBuckets, 0) {}

void LatencyHistogram::add(std::uint64_t ns) {
  ++buckets_[bucket_of(ns)];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

double LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::max(1.0, q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      const auto [lo, hi] = bounds(b);
      return std::clamp((lo + hi) / 2, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

nlohmann::json LatencyHistogram::to_json() const {
  nlohmann::json b = nlohmann::json::array();
  for (std::size_t i = 0; i < kBuckets; ++i)
    if (buckets_[i]) b.push_back({i, buckets_[i]});
  return {{"count", count_}, {"sum", sum_}, {"min", min()}, {"max", max_}, {"buckets", b}};
}

LatencyHistogram LatencyHistogram::from_json(const nlohmann::json& j) {
  LatencyHistogram h;
  try {
    h.count_ = j.at("count").get<std::uint64_t>();
    h.sum_ = j.at("sum").get<std::uint64_t>();
    h.max_ = j.at("max").get<std::uint64_t>();
    h.min_ = h.count_ ? j.at("min").get<std::uint64_t>() : ~std::uint64_t{0};
    std::uint64_t total = 0;
    for (const auto& e : j.at("buckets")) {
      const auto i = e.at(0).get<std::size_t>();
      if (i >= kBuckets) throw std::invalid_argument("bucket index out of range");
      h.buckets_[i] += e.at(1).get<std::uint64_t>();
      total += e.at(1).get<std::uint64_t>();
    }
    if (total != h.count_) throw std::invalid_argument("bucket counts do not add up to count");
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("latency histogram: ") + e.what());
  }
  return h;
}

}  // namespace zipper::loadgen
