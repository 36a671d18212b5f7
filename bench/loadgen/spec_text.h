// The "key=value,key=value" values of zipper-loadgen's --job, --churn and
// --zipperd options: split, checked against the keys a spec knows, and the
// numbers in them parsed with their bounds.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace zipper::loadgen {

class SpecText {
 public:
  /// Parses `text`. Throws std::invalid_argument naming `what` (e.g.
  /// "--job") and the fault: an item without '=', an empty key or value, a
  /// key given twice, a key not in `known`.
  SpecText(std::string_view what, std::string_view text,
           std::initializer_list<std::string_view> known);

  bool has(std::string_view key) const { return kv_.find(key) != kv_.end(); }
  /// The value of `key`, or `fallback` when absent.
  std::string str(std::string_view key, std::string fallback) const;
  /// A decimal integer in [lo, hi]; throws std::invalid_argument otherwise.
  std::uint64_t integer(std::string_view key, std::uint64_t fallback, std::uint64_t lo,
                        std::uint64_t hi) const;
  /// A decimal number in [lo, hi]; a trailing '%' divides it by 100.
  double number(std::string_view key, double fallback, double lo, double hi) const;

 private:
  [[noreturn]] void fail(std::string_view key, const std::string& why) const;

  std::string what_;
  std::map<std::string, std::string, std::less<>> kv_;
};

/// "X+Y" (ranks in the low and the high group, each at least 1). Throws
/// std::invalid_argument naming `what` otherwise.
struct Layout {
  std::uint32_t x = 0, y = 0;
  std::uint32_t size() const { return x + y; }
  std::string text() const { return std::to_string(x) + "+" + std::to_string(y); }
};
Layout parse_layout(std::string_view what, std::string_view text);

}  // namespace zipper::loadgen
