#include "traffic_pattern.h"

#include <algorithm>

namespace zipper::loadgen {

std::optional<Pattern> parse_pattern(std::string_view name) {
  for (Pattern p : {Pattern::kRing, Pattern::kNeighbours, Pattern::kIncast, Pattern::kAllToAll,
                    Pattern::kPingPong})
    if (to_string(p) == name) return p;
  return std::nullopt;
}

std::string_view to_string(Pattern p) {
  switch (p) {
    case Pattern::kRing:
      return "ring";
    case Pattern::kNeighbours:
      return "neighbours";
    case Pattern::kIncast:
      return "incast";
    case Pattern::kAllToAll:
      return "alltoall";
    case Pattern::kPingPong:
      return "pingpong";
  }
  return "?";
}

std::uint64_t pair_count(Pattern p, std::uint32_t x, std::uint32_t y, std::uint32_t degree) {
  const std::uint64_t X = x, Y = y;
  switch (p) {
    case Pattern::kRing:
      return X + Y;
    case Pattern::kNeighbours:
      return X * std::min<std::uint64_t>(degree, Y) + Y * std::min<std::uint64_t>(degree, X);
    case Pattern::kIncast:
      return Y;
    case Pattern::kAllToAll:
      return 2 * X * Y;
    case Pattern::kPingPong:
      return 2 * std::min(X, Y);
  }
  return 0;
}

PairTable::PairTable(Pattern p, std::uint32_t x, std::uint32_t y, std::uint32_t degree)
    : p_(p), x_(x), y_(y) {
  if (p == Pattern::kAllToAll) return;
  const std::uint32_t n = x + y;
  std::vector<std::vector<std::uint32_t>> dests(n);
  const std::uint32_t pairs = std::min(x, y);
  for (std::uint32_t r = 0; r < n; ++r) {
    const bool lo = r < x;
    const std::uint32_t pos = lo ? r : r - x;  // position in its group
    const std::uint32_t other = lo ? y : x;    // size of the other group
    const std::uint32_t base = lo ? x : 0;     // first rank of the other group
    switch (p) {
      case Pattern::kRing:
        dests[r].push_back(lo ? x + pos % y : (pos + 1) % x);
        break;
      case Pattern::kNeighbours: {
        const std::uint32_t d = std::min(degree, other);
        const auto start = static_cast<std::uint32_t>(std::uint64_t{pos} * other / (lo ? x : y));
        for (std::uint32_t k = 0; k < d; ++k) dests[r].push_back(base + (start + k) % other);
        break;
      }
      case Pattern::kIncast:
        if (!lo) dests[r].push_back(0);
        break;
      case Pattern::kPingPong:
        if (pos < pairs) dests[r].push_back(lo ? x + pos : pos);
        break;
      case Pattern::kAllToAll:
        break;
    }
  }
  std::vector<std::vector<std::uint32_t>> srcs(n);
  for (std::uint32_t r = 0; r < n; ++r)
    for (std::uint32_t d : dests[r]) srcs[d].push_back(r);  // r ascending: sorted
  dst_off_.assign(n + 1, 0);
  src_off_.assign(n + 1, 0);
  for (std::uint32_t r = 0; r < n; ++r) {
    dst_off_[r + 1] = dst_off_[r] + dests[r].size();
    src_off_[r + 1] = src_off_[r] + srcs[r].size();
    dst_.insert(dst_.end(), dests[r].begin(), dests[r].end());
    src_.insert(src_.end(), srcs[r].begin(), srcs[r].end());
  }
}

std::uint32_t PairTable::dest_count(std::uint32_t r) const {
  if (p_ == Pattern::kAllToAll) return low(r) ? y_ : x_;
  return static_cast<std::uint32_t>(dst_off_[r + 1] - dst_off_[r]);
}

std::uint32_t PairTable::dest(std::uint32_t r, std::uint32_t i) const {
  if (p_ == Pattern::kAllToAll) return low(r) ? x_ + i : i;
  return dst_[dst_off_[r] + i];
}

std::uint32_t PairTable::src_count(std::uint32_t r) const {
  if (p_ == Pattern::kAllToAll) return low(r) ? y_ : x_;
  return static_cast<std::uint32_t>(src_off_[r + 1] - src_off_[r]);
}

std::optional<std::uint32_t> PairTable::src_index(std::uint32_t r, std::uint32_t src) const {
  if (p_ == Pattern::kAllToAll) {
    if (low(r) && src >= x_ && src < x_ + y_) return src - x_;
    if (!low(r) && src < x_) return src;
    return std::nullopt;
  }
  const auto first = src_.begin() + static_cast<std::ptrdiff_t>(src_off_[r]);
  const auto last = src_.begin() + static_cast<std::ptrdiff_t>(src_off_[r + 1]);
  const auto it = std::lower_bound(first, last, src);
  if (it == last || *it != src) return std::nullopt;
  return static_cast<std::uint32_t>(it - first);
}

std::uint64_t PairTable::pairs() const {
  if (p_ == Pattern::kAllToAll) return 2 * std::uint64_t{x_} * y_;
  return dst_.size();
}

}  // namespace zipper::loadgen
