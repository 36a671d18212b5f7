// Rate limit for repeated log lines: at most `burst` lines per kind in each
// window; the next line of that kind after a window says how many were
// suppressed. A 1000-rank job that dies at once logs a screenful, not 1000s
// of lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace zipper::forwarder {

class WarnLimiter {
 public:
  explicit WarnLimiter(int burst = 10, std::chrono::milliseconds window = std::chrono::seconds(10))
      : burst_(burst), window_(window) {}

  /// Whether a line of `kind` may be logged now. When it may and earlier
  /// lines were suppressed, *suppressed receives their number (else 0).
  bool allow(const std::string& kind, std::uint64_t* suppressed) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lk(mu_);
    State& s = kinds_[kind];
    *suppressed = 0;
    if (now - s.window_start >= window_) {
      s.window_start = now;
      s.count = 0;
    }
    if (s.count >= burst_) {
      ++s.suppressed;
      return false;
    }
    ++s.count;
    *suppressed = s.suppressed;
    s.suppressed = 0;
    return true;
  }

 private:
  struct State {
    std::chrono::steady_clock::time_point window_start{};
    int count = 0;
    std::uint64_t suppressed = 0;
  };
  const int burst_;
  const std::chrono::milliseconds window_;
  std::mutex mu_;
  std::map<std::string, State> kinds_;
};

}  // namespace zipper::forwarder
