// Per-job registry: which connection serves which virtual rank. A rank of one
// job can never address a rank of another, because routing looks up the
// destination only inside the sender's own Job.
//
// A job is named by its id together with the fingerprint of its secret
// (proto/auth.h): a party without the secret who claims the same id makes a
// different job, so a job id cannot be squatted. Rank tables grow with the
// ranks that actually connect, never with the layout a hello claims.
//
// Shares: a layout (the job's site table) may claim at most a configured part of
// --max-connections, and one owner (a MUNGE uid, else a source address) may
// run at most --max-jobs-per-user jobs at once. A complete job is never
// reaped for being idle: it may compute for hours.
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
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../proto/auth.h"
#include "buffer_pool.h"
#include "connection.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

class Job {
 public:
  /// `sites`: the job's site table (ranks per site, in world-rank order;
  /// 2..64 sites of at least one rank each, as JobRegistry::check_layout
  /// accepts).
  Job(std::uint64_t id, const proto::auth::Fingerprint& fp, const proto::auth::Key& key,
      std::vector<std::uint32_t> sites, std::optional<std::uint32_t> uid, std::string owner);

  /// The job's one label in the log, zipperctl and /metrics: 12 hex digits of
  /// a BLAKE2b hash of (id, secret fingerprint). It reveals neither, and two
  /// jobs that share an id (each with its own secret) get different labels.
  static std::string job_label(std::uint64_t id, const proto::auth::Fingerprint& fp);

  std::uint64_t id() const { return id_; }
  /// The job's site table: ranks per site, in world-rank order.
  const std::vector<std::uint32_t>& sites() const { return sites_; }
  /// World ranks over all sites.
  std::uint32_t size() const { return first_.back(); }
  /// The site of rank `vrank`, or -1 when it is outside the job.
  int site_of(std::uint32_t vrank) const;
  /// HMAC key that admits further ranks (derived from the job secret).
  const proto::auth::Key& auth_key() const { return key_; }
  /// MUNGE uid the job is kept to (--auth munge), else nullopt.
  const std::optional<std::uint32_t>& uid() const { return uid_; }
  /// See job_label().
  const std::string& label() const { return label_; }
  /// Whose job it counts against (--max-jobs-per-user): "uid N" or "address A".
  const std::string& owner() const { return owner_; }
  /// Source address prefix of its first rank (--max-jobs-per-prefix), e.g. "10.1.2.0/24".
  const std::string& prefix() const { return prefix_; }
  /// Whose share it counts against (tenant_share.h): "uid N", "prefix P" or the owner.
  const std::string& tenant() const { return tenant_; }

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
  /// Relayed traffic sent by the ranks of site s (0 <= s < sites().size()).
  Traffic from_site(std::size_t s) const { return from_site_[s].load(); }
  /// Counts one relayed frame sent by `src` (a rank of the job).
  void count(std::uint32_t src, std::uint64_t payload_bytes) {
    const int s = site_of(src);
    if (s >= 0) from_site_[static_cast<std::size_t>(s)].add(payload_bytes);
  }
  /// Frames relayed for the job so far, every site's together.
  std::uint64_t frames_relayed() const;
  const std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();

  /// Payload bytes this job's frames hold inside zipperd (JobMemoryShare).
  std::atomic<std::uint64_t> memory_held{0};
  /// Connections of this job parked because the job is at its share.
  std::atomic<int> share_parked{0};
  /// Advances whenever one of the job's frames leaves zipperd: a connection
  /// parked at the job's share (or behind a full destination) retries only
  /// when it moved.
  std::atomic<std::uint64_t> releases{0};
  /// The job's pool buffers by size class (BufferPool's per-class shares).
  PoolTenant pool_use;

  /// Departures without BYE not yet announced: (rank, why), gathered for
  /// one coalesced notice (Forwarder::note_departure; reaper thread only).
  std::vector<std::pair<std::uint32_t, std::string>> pending_departures;

  /// True for the first call only: the job was aborted (a rank's ABORT).
  bool abort_once() { return !aborted_.exchange(true, std::memory_order_relaxed); }

  /// Departures without BYE announced to the other ranks one by one; after
  /// that, one last notice says the job is broken (kAllRanks) and further
  /// departures cost nothing (no O(N^2) on a mass disconnect).
  static constexpr std::uint32_t kAnnouncedDepartures = 8;
  static constexpr std::uint32_t kAllRanks = 0xffffffffu;
  /// Counts one departure without BYE: returns the rank to announce (the
  /// departed one, or kAllRanks once), or nullopt when nothing is announced.
  std::optional<std::uint32_t> depart_unannounced(std::uint32_t vrank) {
    const std::uint32_t n = unorderly_.fetch_add(1, std::memory_order_relaxed);
    if (n < kAnnouncedDepartures) return vrank;
    if (n == kAnnouncedDepartures) return kAllRanks;
    return std::nullopt;
  }

 private:
  friend class JobRegistry;
  const std::uint64_t id_;
  const proto::auth::Fingerprint fingerprint_;
  const proto::auth::Key key_;
  const std::vector<std::uint32_t> sites_;
  std::vector<std::uint32_t> first_;  // world rank of each site's first; back() = size()
  std::unique_ptr<TrafficCounters[]> from_site_;
  const std::optional<std::uint32_t> uid_;
  const std::string owner_;
  std::string prefix_;  // set once by JobRegistry::join, before the job is shared
  std::string tenant_;  // likewise
  const std::string label_;
  // Activity as JobRegistry last sampled it (under the registry's lock).
  std::uint64_t seen_frames_ = 0;
  std::chrono::steady_clock::time_point last_active_ = created;
  std::atomic<std::uint32_t> unorderly_{0};
  std::atomic<bool> aborted_{false};
  mutable std::mutex mu_;
  std::unordered_map<std::uint32_t, std::shared_ptr<Connection>> slots_;
  std::unordered_set<std::uint32_t> departed_;  // ranks that left: never admitted again
  bool ready_ = false;
};

class JobRegistry {
 public:
  /// `max_jobs`: jobs at once; `max_ranks`: largest layout x+y accepted;
  /// `max_layout`: largest layout as a share of --max-connections (the
  /// message names that option); `max_jobs_per_owner`: jobs at once per owner.
  /// `max_jobs_per_prefix`: jobs at once per address prefix (tenants
  /// without a MUNGE uid; tenant_share.h, which also keeps --max-jobs'
  /// reserve and shares `max_layout` connections per tenant); `idle_evict`:
  /// how long a job must have relayed nothing before it may be evicted.
  JobRegistry(std::size_t max_jobs, std::uint32_t max_ranks, std::uint32_t max_layout,
              std::uint32_t max_jobs_per_owner, std::uint32_t max_jobs_per_prefix = ~0u,
              std::chrono::milliseconds idle_evict = std::chrono::hours(24 * 365))
      : max_jobs_(max_jobs),
        max_ranks_(max_ranks),
        max_layout_(max_layout),
        max_jobs_per_owner_(max_jobs_per_owner),
        max_jobs_per_prefix_(max_jobs_per_prefix),
        idle_evict_(idle_evict) {}

  struct JoinRequest {
    std::uint64_t job_id = 0;
    proto::auth::Fingerprint fingerprint{};
    proto::auth::Key key{};            // used only when this join creates the job
    std::vector<std::uint32_t> sites;  // the hello's site table
    std::uint32_t vrank = 0;
    std::optional<std::uint32_t> uid;  // MUNGE uid of the connecting rank
    std::string owner;                 // "uid N" with MUNGE, else "address A" of the connection
    std::string prefix;                // the connection's source address prefix ("" = none)
    bool may_create = true;            // false while draining: only ranks of existing jobs join
    // Runs under the job's lock just before the connection is published
    // (e.g. queue its HELLO_ACK, so that no JOB_READY another thread sends
    // to the job's members can overtake it).
    std::function<void()> before_publish;
  };
  struct JoinResult {
    std::shared_ptr<Job> job;  // null on error
    std::string error;
    bool now_ready = false;      // this join completed the job: announce JOB_READY to all
    bool ready = false;          // the job is complete (now or earlier)
    bool draining = false;       // refused: a new job while draining
    bool first_refusal = false;  // draining: the first refused rank of that job (count jobs once)
    // Idle jobs evicted to make room for this one: already out of every
    // count; the caller closes their connections.
    std::vector<std::shared_ptr<Job>> evicted;
  };
  /// What leave() did.
  struct LeaveResult {
    bool finished = false;  // the job's last rank left: the job ended
  };

  /// Checks a site table and rank against the limits, before any
  /// authentication work: at least two sites, none empty, at most
  /// --max-ranks and one job's share of connections in all, the rank inside.
  /// Returns an error text, or empty when acceptable.
  std::string check_layout(const std::vector<std::uint32_t>& sites, std::uint32_t vrank) const;

  /// The job named (id, fingerprint), or nullptr.
  std::shared_ptr<Job> find(std::uint64_t job_id, const proto::auth::Fingerprint& fp) const;

  /// Registers `conn` as `vrank` of the job, creating the job if needed. Sets
  /// conn->job and conn->vrank under the job's lock before the connection
  /// becomes visible to other threads. Errors: limits, inconsistent layout,
  /// another uid, rank already connected or already departed.
  JoinResult join(const JoinRequest& req, const std::shared_ptr<Connection>& conn);
  /// Removes `conn` from its job (its rank is never admitted again); drops
  /// the job when its last rank leaves.
  LeaveResult leave(const std::shared_ptr<Connection>& conn);
  std::size_t job_count() const;
  /// True while job `job_id` has at least one rank connected.
  bool contains(std::uint64_t job_id) const;
  /// Jobs with ranks connected, by id.
  std::vector<std::shared_ptr<Job>> active() const;
  /// The last kFinishedKept jobs whose ranks have all left, oldest first.
  std::vector<std::shared_ptr<Job>> finished() const;

  static constexpr std::size_t kFinishedKept = 64;

  /// Notes which jobs relayed frames since the last call (every sweep, 250
  /// ms): a job is idle from the last sample that saw its counters move.
  void sample_activity(std::chrono::steady_clock::time_point now);
  /// Takes out of every count the job that goes first among those idle for
  /// at least `idle_evict` and matching `filter` (nullptr: any), and returns
  /// it (nullptr: none). Order: a job whose ranks have not all connected
  /// (it cannot run, and the ready timeout would end it anyway), then the
  /// owner with most jobs (the one holding the cap), then the longest idle.
  std::shared_ptr<Job> evict_idle(std::chrono::steady_clock::time_point now,
                                  const std::function<bool(const Job&)>& filter = nullptr);
  std::uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<Job> evict_idle_locked(std::chrono::steady_clock::time_point now,
                                         const std::function<bool(const Job&)>& filter);
  void forget_locked(const std::shared_ptr<Job>& job);
  using Key = std::pair<std::uint64_t, proto::auth::Fingerprint>;
  const std::size_t max_jobs_;
  const std::uint32_t max_ranks_, max_layout_, max_jobs_per_owner_, max_jobs_per_prefix_;
  const std::chrono::milliseconds idle_evict_;
  std::map<std::string, std::uint32_t> jobs_per_tenant_;
  // Admitted ranks of each tenant's jobs (at most max_layout_: tenant_share.h).
  std::map<std::string, std::uint32_t> conns_per_tenant_;
  std::atomic<std::uint64_t> evictions_{0};
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<Job>> jobs_;
  std::deque<std::shared_ptr<Job>> finished_;
  std::map<std::string, std::uint32_t> jobs_per_owner_;
  std::set<Key> refused_draining_;  // jobs refused while draining (bounded)
};

}  // namespace zipper::forwarder
