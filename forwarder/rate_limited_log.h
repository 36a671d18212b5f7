// zipperd's rate-limited log lines, shared by its collaborators: warnings of
// one kind (10 per 10 s), and info lines of one kind or of one kind for one
// job (5 per minute, 2 per job), so that a flood of refusals or a 1000-rank
// job ending at once logs a screenful, not a line per event (LogLimiter).
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <utility>

#include "log_limiter.h"

namespace zipper::forwarder {

class RateLimitedLog {
 public:
  /// Logs a warning unless too many of its kind came lately.
  template <typename... Args>
  void warn(const std::string& kind, fmt::format_string<Args...> f, Args&&... args) {
    if (warn_limiter_.allow(kind)) spdlog::warn(f, std::forward<Args>(args)...);
  }
  /// Logs at info unless too many of its kind, or of its kind for `job`,
  /// came lately: admissions, departures and job ends are counted beyond that.
  template <typename... Args>
  void info(const std::string& kind, const std::string& job, fmt::format_string<Args...> f,
            Args&&... args) {
    if (!spdlog::should_log(spdlog::level::info)) return;
    if (info_limiter_.allow(kind, job)) spdlog::info(f, std::forward<Args>(args)...);
  }
  /// Reports the lines the limiters held back, one line per kind (from the
  /// timeout sweep of side 0).
  void report_suppressed() {
    for (const auto& [kind, n] : warn_limiter_.take_suppressed())
      spdlog::warn("{} more '{}' warnings suppressed (at most 10 per 10 s)", n, kind);
    for (const auto& [kind, n] : info_limiter_.take_suppressed())
      spdlog::info("{} more '{}' lines suppressed (at most 5 per minute, 2 per job)", n, kind);
  }

 private:
  LogLimiter warn_limiter_{10, 10, std::chrono::seconds(10)};
  LogLimiter info_limiter_{5, 2, std::chrono::seconds(60)};
};

}  // namespace zipper::forwarder
