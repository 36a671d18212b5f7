// Rate limit for repeated log lines, per kind and per job: at most
// `kind_burst` lines of one kind, and `job_burst` of one kind for one job, in
// each window. What is held back is counted, and flush() (called from the
// timeout sweep) reports the count once the window has passed, in one line per
// kind. A 1000-rank job that dies at once, or an admit-and-BYE loop, logs a
// screenful per window, not a line per rank (logs stay bounded).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace zipper::forwarder {

class LogLimiter {
 public:
  explicit LogLimiter(int kind_burst = 10, int job_burst = 3,
                      std::chrono::milliseconds window = std::chrono::seconds(10))
      : kind_burst_(kind_burst), job_burst_(job_burst), window_(window) {}

  /// Whether a line of `kind` (about job `job`, or "" for none) may be
  /// logged now; false counts it as suppressed.
  bool allow(const std::string& kind, const std::string& job = {}) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lk(mu_);
    Kind& k = kinds_[kind];
    roll(k.budget, now);
    bool ok = k.budget.count < kind_burst_;
    Budget* per_job = nullptr;
    if (!job.empty()) {
      // Bounded: jobs come and go, so entries of past windows are dropped.
      if (k.jobs.size() >= kMaxJobsTracked) prune(k, now);
      per_job = &k.jobs[job];
      roll(*per_job, now);
      ok = ok && per_job->count < job_burst_;
    }
    if (!ok) {
      ++k.suppressed;
      return false;
    }
    ++k.budget.count;
    if (per_job) ++per_job->count;
    return true;
  }

  /// Kinds with suppressed lines, with their counts, at most once per window
  /// per kind; resets those counts.
  std::vector<std::pair<std::string, std::uint64_t>> take_suppressed() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<std::string, std::uint64_t>> out;
    std::lock_guard lk(mu_);
    for (auto& [name, k] : kinds_) {
      if (k.suppressed == 0 || now - k.reported < window_) continue;
      out.emplace_back(name, k.suppressed);
      k.suppressed = 0;
      k.reported = now;
    }
    return out;
  }

  std::chrono::milliseconds window() const { return window_; }

 private:
  static constexpr std::size_t kMaxJobsTracked = 4096;
  struct Budget {
    std::chrono::steady_clock::time_point start{};
    int count = 0;
  };
  struct Kind {
    Budget budget;
    std::uint64_t suppressed = 0;
    std::chrono::steady_clock::time_point reported{};
    std::map<std::string, Budget> jobs;
  };
  void roll(Budget& b, std::chrono::steady_clock::time_point now) const {
    if (now - b.start >= window_) {
      b.start = now;
      b.count = 0;
    }
  }
  void prune(Kind& k, std::chrono::steady_clock::time_point now) const {
    for (auto it = k.jobs.begin(); it != k.jobs.end();)
      it = now - it->second.start >= window_ ? k.jobs.erase(it) : std::next(it);
    if (k.jobs.size() >= kMaxJobsTracked) k.jobs.clear();  // all current: start afresh
  }

  const int kind_burst_, job_burst_;
  const std::chrono::milliseconds window_;
  std::mutex mu_;
  std::map<std::string, Kind> kinds_;
};

}  // namespace zipper::forwarder
