#include "spec_text.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace zipper::loadgen {

SpecText::SpecText(std::string_view what, std::string_view text,
                   std::initializer_list<std::string_view> known)
    : what_(what) {
  std::string keys;
  for (auto k : known) keys += (keys.empty() ? "" : ", ") + std::string(k);
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument(what_ + ": '" + std::string(item) +
                                  "' is not KEY=VALUE (keys: " + keys + ")");
    const std::string key(item.substr(0, eq));
    bool ok = false;
    for (auto k : known) ok = ok || k == key;
    if (!ok)
      throw std::invalid_argument(what_ + ": unknown key '" + key + "' (keys: " + keys + ")");
    if (!kv_.emplace(key, std::string(item.substr(eq + 1))).second)
      throw std::invalid_argument(what_ + ": key '" + key + "' given twice");
  }
}

void SpecText::fail(std::string_view key, const std::string& why) const {
  throw std::invalid_argument(what_ + ": " + std::string(key) + "=" + kv_.find(key)->second + ": " +
                              why);
}

std::string SpecText::str(std::string_view key, std::string fallback) const {
  const auto it = kv_.find(key);
  return it == kv_.end() ? fallback : it->second;
}

std::uint64_t SpecText::integer(std::string_view key, std::uint64_t fallback, std::uint64_t lo,
                                std::uint64_t hi) const {
  const auto it = kv_.find(key);
  if (it == kv_.end()) return fallback;
  const std::string& v = it->second;
  std::uint64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) fail(key, "not a whole number");
  if (out < lo || out > hi)
    fail(key, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return out;
}

double SpecText::number(std::string_view key, double fallback, double lo, double hi) const {
  const auto it = kv_.find(key);
  if (it == kv_.end()) return fallback;
  std::string v = it->second;
  const bool percent = !v.empty() && v.back() == '%';
  if (percent) v.pop_back();
  double out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(out))
    fail(key, "not a number");
  if (percent) out /= 100;
  if (out < lo || out > hi)
    fail(key, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return out;
}

Layout parse_layout(std::string_view what, std::string_view text) {
  const auto plus = text.find('+');
  Layout l;
  const auto part = [&](std::string_view s, std::uint32_t* out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && end == s.data() + s.size() && *out >= 1;
  };
  if (plus == std::string_view::npos || !part(text.substr(0, plus), &l.x) ||
      !part(text.substr(plus + 1), &l.y) || std::uint64_t{l.x} + l.y > (1u << 24))
    throw std::invalid_argument(std::string(what) + ": layout '" + std::string(text) +
                                "' is not X+Y (ranks of the low and the high group, each at "
                                "least 1, at most 2^24 in all)");
  return l;
}

}  // namespace zipper::loadgen
