// Per-job registry: which connection serves which virtual rank. A rank of one
// job can never address a rank of another, because routing looks up the
// destination only inside the sender's own Job.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "connection.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

class Job {
 public:
  Job(std::uint64_t id, std::uint32_t np_low, std::uint32_t np_high)
      : id_(id), np_low_(np_low), np_high_(np_high), slots_(np_low + np_high) {}

  std::uint64_t id() const { return id_; }
  std::uint32_t np_low() const { return np_low_; }
  std::uint32_t np_high() const { return np_high_; }
  std::uint32_t size() const { return np_low_ + np_high_; }

  /// Connection currently serving `vrank`, or nullptr.
  std::shared_ptr<Connection> lookup(std::uint32_t vrank) const {
    std::lock_guard lk(mu_);
    return vrank < slots_.size() ? slots_[vrank] : nullptr;
  }
  /// All connected ranks (snapshot).
  std::vector<std::shared_ptr<Connection>> members() const;
  std::uint32_t connected() const {
    std::lock_guard lk(mu_);
    return connected_;
  }
  /// Relayed traffic by direction: low group (ranks < np_low) to high, and back.
  TrafficCounters from_low, from_high;
  /// Counts one relayed frame sent by `src`.
  void count(std::uint32_t src, std::uint64_t payload_bytes) {
    (src < np_low_ ? from_low : from_high).add(payload_bytes);
  }
  const std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();

 private:
  friend class JobRegistry;
  const std::uint64_t id_;
  const std::uint32_t np_low_, np_high_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Connection>> slots_;
  std::uint32_t connected_ = 0;
  bool ready_ = false;
};

class JobRegistry {
 public:
  struct JoinResult {
    std::shared_ptr<Job> job;  // null on error
    std::string error;
    bool now_ready = false;  // this join completed the job: announce JOB_READY to all
    bool ready = false;      // the job is complete (now or earlier)
  };
  /// Registers `conn` as `vrank` of job `job_id` with layout x+y.
  /// Errors: inconsistent layout, rank out of range, rank already connected.
  JoinResult join(std::uint64_t job_id, std::uint32_t np_low, std::uint32_t np_high,
                  std::uint32_t vrank, const std::shared_ptr<Connection>& conn);
  /// Removes `conn` from its job; drops the job when its last rank leaves.
  void leave(const std::shared_ptr<Connection>& conn);
  std::size_t job_count() const;
  /// True while job `job_id` has at least one rank connected.
  bool contains(std::uint64_t job_id) const;
  /// Jobs with ranks connected, by id.
  std::vector<std::shared_ptr<Job>> active() const;
  /// The last kFinishedKept jobs whose ranks have all left, oldest first.
  std::vector<std::shared_ptr<Job>> finished() const;

  static constexpr std::size_t kFinishedKept = 64;

 private:
  mutable std::mutex mu_;
  std::map<std::uint64_t, std::shared_ptr<Job>> jobs_;
  std::deque<std::shared_ptr<Job>> finished_;
};

}  // namespace zipper::forwarder
