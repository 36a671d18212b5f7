// Per-job registry: which connection serves which virtual rank. A rank of one
// job can never address a rank of another, because routing looks up the
// destination only inside the sender's own Job.
//
// A job is named by its id together with the fingerprint of its secret
// (proto/auth.h): a party without the secret who claims the same id makes a
// different job, so a job id cannot be squatted. Rank tables grow with the
// ranks that actually connect, never with the layout a hello claims.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../proto/auth.h"
#include "connection.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

class Job {
 public:
  Job(std::uint64_t id, const proto::auth::Fingerprint& fp, const proto::auth::Key& key,
      std::uint32_t np_low, std::uint32_t np_high, std::optional<std::uint32_t> uid)
      : id_(id),
        fingerprint_(fp),
        key_(key),
        np_low_(np_low),
        np_high_(np_high),
        uid_(uid),
        log_name_(proto::auth::log_name(fp)) {}

  std::uint64_t id() const { return id_; }
  std::uint32_t np_low() const { return np_low_; }
  std::uint32_t np_high() const { return np_high_; }
  std::uint32_t size() const { return np_low_ + np_high_; }
  /// HMAC key that admits further ranks (derived from the job secret).
  const proto::auth::Key& auth_key() const { return key_; }
  /// MUNGE uid the job is kept to (--auth munge), else nullopt.
  const std::optional<std::uint32_t>& uid() const { return uid_; }
  /// Name for logs: neither the job id nor anything that reveals the secret.
  const std::string& log_name() const { return log_name_; }

  /// Connection currently serving `vrank`, or nullptr.
  std::shared_ptr<Connection> lookup(std::uint32_t vrank) const {
    std::lock_guard lk(mu_);
    auto it = slots_.find(vrank);
    return it == slots_.end() ? nullptr : it->second;
  }
  /// Every rank has connected (JOB_READY was announced).
  bool ready() const {
    std::lock_guard lk(mu_);
    return ready_;
  }
  /// All connected ranks (snapshot).
  std::vector<std::shared_ptr<Connection>> members() const;
  /// Ranks connected now.
  std::uint32_t connected() const {
    std::lock_guard lk(mu_);
    return static_cast<std::uint32_t>(slots_.size());
  }
  /// Relayed traffic by direction: low group (ranks < np_low) to high, and back.
  TrafficCounters from_low, from_high;
  /// Counts one relayed frame sent by `src`.
  void count(std::uint32_t src, std::uint64_t payload_bytes) {
    (src < np_low_ ? from_low : from_high).add(payload_bytes);
  }
  const std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();

  /// Payload bytes this job's frames hold inside zipperd (JobMemoryShare).
  std::atomic<std::uint64_t> memory_held{0};
  /// Connections of this job parked because the job is at its share.
  std::atomic<int> share_parked{0};

 private:
  friend class JobRegistry;
  const std::uint64_t id_;
  const proto::auth::Fingerprint fingerprint_;
  const proto::auth::Key key_;
  const std::uint32_t np_low_, np_high_;
  const std::optional<std::uint32_t> uid_;
  const std::string log_name_;
  mutable std::mutex mu_;
  std::unordered_map<std::uint32_t, std::shared_ptr<Connection>> slots_;
  std::unordered_set<std::uint32_t> departed_;  // ranks that left: never admitted again
  bool ready_ = false;
};

class JobRegistry {
 public:
  /// `max_jobs`: jobs at once; `max_ranks`: largest layout x+y accepted.
  JobRegistry(std::size_t max_jobs, std::uint32_t max_ranks)
      : max_jobs_(max_jobs), max_ranks_(max_ranks) {}

  struct JoinRequest {
    std::uint64_t job_id = 0;
    proto::auth::Fingerprint fingerprint{};
    proto::auth::Key key{};  // used only when this join creates the job
    std::uint32_t np_low = 0, np_high = 0, vrank = 0;
    std::optional<std::uint32_t> uid;  // MUNGE uid of the connecting rank
    // Runs under the job's lock just before the connection is published
    // (e.g. queue its HELLO_ACK, so that no JOB_READY another thread sends
    // to the job's members can overtake it).
    std::function<void()> before_publish;
  };
  struct JoinResult {
    std::shared_ptr<Job> job;  // null on error
    std::string error;
    bool now_ready = false;  // this join completed the job: announce JOB_READY to all
    bool ready = false;      // the job is complete (now or earlier)
  };

  /// Checks a layout and rank against the limits, before any authentication
  /// work. Returns an error text, or empty when acceptable.
  std::string check_layout(std::uint32_t np_low, std::uint32_t np_high, std::uint32_t vrank) const;

  /// The job named (id, fingerprint), or nullptr.
  std::shared_ptr<Job> find(std::uint64_t job_id, const proto::auth::Fingerprint& fp) const;

  /// Registers `conn` as `vrank` of the job, creating the job if needed. Sets
  /// conn->job and conn->vrank under the job's lock before the connection
  /// becomes visible to other threads. Errors: limits, inconsistent layout,
  /// another uid, rank already connected or already departed.
  JoinResult join(const JoinRequest& req, const std::shared_ptr<Connection>& conn);
  /// Removes `conn` from its job (its rank is never admitted again); drops
  /// the job when its last rank leaves.
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
  using Key = std::pair<std::uint64_t, proto::auth::Fingerprint>;
  const std::size_t max_jobs_;
  const std::uint32_t max_ranks_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<Job>> jobs_;
  std::deque<std::shared_ptr<Job>> finished_;
};

}  // namespace zipper::forwarder
