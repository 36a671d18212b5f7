// zipperd's core: relays frames between client connections arriving on one or
// more listeners (one per subnet).
//
// Threads: every listener ("side") has a receive thread and a send thread.
// A frame read on side A is written to its destination on side B directly by
// A's receive thread when B's socket takes it; whatever the socket does not
// take is finished by B's send thread on EPOLLOUT. A->B and B->A therefore use
// disjoint threads and never wait on each other (full duplex), and chunk i is
// written out while chunk i+1 is still being read (cut-through).
// With --splice, a large payload between two TCP links stays in the kernel:
// it is spliced from the source socket into a pipe and from the pipe into the
// destination socket (pipe_pool.h), so zipperd copies none of its bytes.
//
// Memory: every payload lives in a buffer of a preallocated pool (size
// classes, as Lustre LNet's router buffers; buffer_pool.h), all pools
// together at most `max_memory` bytes. Each connection may hold at most
// `conn_credits` frames inside zipperd (credit-based flow control counted in
// buffers, as LNet's peer credits); a receiver that finds the pools empty
// pauses that connection until a buffer is released.
//
// Implementation, one concern per file: forwarder.cpp (settings, start,
// stop), event_loops.cpp (the epoll loops), connections.cpp (accept, EMFILE
// pauses, close), admission.cpp (HELLO/AUTH, drain), relay.cpp (routing and
// cut-through), recv_sink.cpp (per-frame memory and credit), timeouts.cpp
// (sweeps), stats.cpp (counters and snapshot); forwarder_internal.h holds
// what they share.
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../proto/host_key.h"
#include "../proto/link.h"
#include "../proto/memory_regions.h"
#include "buffer_pool.h"
#include "job_memory_share.h"
#include "job_registry.h"
#include "log_limiter.h"
#include "pipe_pool.h"

namespace zipper::proto::auth {
class MungeVerifier;
}
#include "snapshot.h"

namespace zipper::forwarder {

/// Upper bound on --conn-credits (frames): the wire's credit field is 32 bits,
/// and a larger grant would only let one client occupy more of the pools.
inline constexpr std::uint32_t kMaxConnCredits = 1u << 16;

struct Config {
  struct ListenSpec {
    std::string name;  // "A", "B", ...
    proto::Endpoint endpoint;
  };
  std::vector<ListenSpec> listen;
  std::uint32_t conn_credits = 64;        // frames (buffers) a client may have inside zipperd
  std::uint64_t max_memory = 256u << 20;  // bytes of all payload pools together
  std::uint32_t max_frame = 1u << 20;     // largest accepted payload (bytes)
  /// Payload pool classes; empty = default_pool_classes(max_memory, max_frame).
  std::vector<PoolClassConfig> pools;
  int hello_timeout_ms = 10000;  // a connection must say hello and authenticate within
  // Admission: "secret" (proof of the job secret, proto/auth.h) or "munge"
  // (also a MUNGE credential; a job is kept to one uid).
  std::string auth = "secret";
  // munged socket per listener, in listener order (clusters with different
  // MUNGE keys); empty or missing entries use libmunge's default socket.
  std::vector<std::string> munge_socket;
  std::uint32_t max_ranks = 65536;        // largest layout x+y a job may claim
  std::uint32_t max_jobs = 64;            // jobs served at once
  std::uint32_t max_connections = 16384;  // client connections at once, admitted or not
  // A job's layout x+y may claim at most this percentage of max_connections.
  std::uint32_t max_job_connections_share = 50;
  // Jobs at once per owner: the MUNGE uid with --auth munge, else the source
  // address of the job's first rank.
  std::uint32_t max_jobs_per_user = 16;
  // Jobs at once per source address prefix (/prefix_v4, /prefix_v6) of a
  // job's first rank: many addresses of one subnet count as one (issue 28).
  std::uint32_t max_jobs_per_prefix = 32;
  std::uint32_t prefix_v4 = 24, prefix_v6 = 64;
  // A job that relayed nothing for this long may be evicted when a limit
  // would otherwise refuse a new job, or a connection at --max-connections
  // (JobRegistry::idle_victim says which goes first).
  int idle_evict_ms = 300000;
  // Frames without payload one connection may have handled per receive
  // round (control_budget.h).
  std::uint32_t control_budget = 32;
  int ready_timeout_ms = 120000;  // an admitted rank's job must be complete within this time
  int frame_timeout_ms = 30000;   // a frame's payload must arrive within this time of its header
  int keepalive_s = 60;           // TCP keepalive idle seconds on client links (0 = off)
  int accept_pause_ms = 1000;     // accepting pauses this long when out of file descriptors
  // With exactly two listeners, the low group must arrive on the first and
  // the high group on the second.
  bool group_sides = true;
  // TCP -> TCP payloads of 16-256 KiB move by splice() through a pipe
  // (pipe_pool.h): zipperd copies none of their bytes. Off by default: on the
  // emulated clusters (veth, 2 cores) copying measured faster
  // (docs/performance.md).
  bool splice = false;
  // zipperd's host key (proto/host_key.h), which clients pin; null: a fresh
  // key made at construction, known only to this process (tests, or
  // zipperd without --host-key).
  std::shared_ptr<const proto::auth::HostKey> host_key;
};

struct Stats {
  std::uint64_t frames_relayed = 0;
  std::uint64_t bytes_relayed = 0;  // payload bytes
  std::uint64_t connections = 0;    // accepted so far
  std::uint64_t protocol_errors = 0;
  std::uint64_t peak_memory = 0;  // bytes of pool buffers in use at once (capacities)
  std::uint64_t pool_bytes = 0;   // bytes mapped by the pools
  /// Memory registrations with RDMA devices (ibv_reg_mr calls) this process
  /// made so far: link buffers plus each pool region once per device; a
  /// relayed chunk adds none.
  std::uint64_t memory_registrations = 0;
  std::vector<PoolClassStats> pools;
  std::uint64_t spliced_frames = 0;  // payloads relayed by splice() (pipe_pool.h)
  std::uint64_t spliced_bytes = 0;
  std::uint64_t auth_failures = 0;  // AUTH frames refused
  std::uint64_t refused_admissions =
      0;                            // ranks refused admission (limits, layout, side, slot, drain)
  std::uint64_t timeouts = 0;       // connections closed by a timeout
  std::uint64_t accept_pauses = 0;  // times accepting paused for lack of descriptors
};

class Forwarder {
 public:
  /// Validates `cfg` (throws std::invalid_argument with a clear message).
  explicit Forwarder(Config cfg);
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  /// Binds every listener and starts the threads. Throws std::runtime_error
  /// if a listener cannot be bound.
  void start();
  /// Stops all threads and closes every connection. Idempotent.
  void stop();

  /// Bound addresses, in listener order (useful with port 0).
  std::vector<std::string> addresses() const;
  Stats stats() const;
  const Config& config() const { return cfg_; }
  /// The public half of the host key the CHALLENGE shows (what clients pin).
  const proto::auth::Key& host_public_key() const { return keys_->public_key(); }

  /// Counters of sides, jobs (active and recently finished), connections and
  /// pools, for zipperctl and /metrics. Thread-safe; takes the side and
  /// registry locks briefly.
  Snapshot snapshot() const;
  /// Draining: every new job is refused (kBadHello, "draining"), even one
  /// that names a running job's id with a secret of its own; ranks of running
  /// jobs (the same id and secret) are still admitted, and running jobs
  /// finish normally.
  void set_draining(bool on);
  bool draining() const { return draining_.load(std::memory_order_relaxed); }
  /// One counter per receive and send loop, advanced on every round (a round
  /// ends at least every 500 ms while the loop is healthy). The watchdog
  /// compares two readings to prove the loops are alive.
  std::vector<std::uint64_t> loop_rounds() const;

 private:
  struct Side;
  class RecvSinkImpl;

  void recv_loop(Side& side);
  void send_loop(Side& side);
  void accept_all(Side& side);
  void progress_conn(Side& side, const std::shared_ptr<Connection>& conn);
  void close_conn(const std::shared_ptr<Connection>& conn, const std::string& why);
  void on_frame(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr,
                proto::Payload payload);
  void on_hello(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr,
                const proto::Payload& payload);
  void on_auth(const std::shared_ptr<Connection>& conn, const proto::Payload& payload);
  void admit(const std::shared_ptr<Connection>& conn, JobRegistry::JoinRequest req,
             const proto::auth::Tag& confirm);
  void refuse(const std::shared_ptr<Connection>& conn, proto::ErrorCode code,
              const std::string& why);
  void sweep(Side& side);
  void set_parked(Connection& c, bool on);
  void pause_accepting(Side& side, int err);
  /// Logs a warning unless too many of its kind came lately (LogLimiter).
  template <typename... Args>
  void warn_limited(const std::string& kind, fmt::format_string<Args...> f, Args&&... args);
  /// Logs at info unless too many of its kind, or of its kind for `job`,
  /// came lately: admissions, departures and job ends are counted beyond that.
  template <typename... Args>
  void info_limited(const std::string& kind, const std::string& job, fmt::format_string<Args...> f,
                    Args&&... args);
  /// Reports the lines the limiters held back (from the sweep).
  void report_suppressed();
  /// Tells the job's other ranks that `conn`'s rank left without BYE: one
  /// notice per rank for the first departures, then one saying the job is
  /// broken, then none (Job::depart_unannounced).
  void announce_departure(const std::shared_ptr<Connection>& conn, const std::string& why);
  /// The job ended: one info line with its duration and bytes.
  void log_job_end(const Job& job);
  void send_error(const std::shared_ptr<Connection>& conn, proto::ErrorCode code,
                  std::uint32_t about_rank, std::uint64_t seq, const std::string& text);
  void send_control(const std::shared_ptr<Connection>& conn, proto::OutFrame frame);
  void return_credit(const std::shared_ptr<Connection>& conn, std::uint64_t cost);
  void wake_all_receivers();
  /// Returns a pool buffer and wakes receivers paused for lack of one.
  void release_buffer(const BufferPool::Buffer& b, PoolTenant* tenant);
  void note_protocol_error(const std::shared_ptr<Connection>& conn);
  /// At --max-connections: closes the oldest connection not yet admitted
  /// (any side), else evicts an idle job (JobRegistry::evict_idle). False
  /// when neither exists and the new connection must be refused.
  bool make_room_for_connection();
  /// Logs what the control budget deferred and PINGs dropped (sweep of side 0).
  void report_control_drops(std::chrono::steady_clock::time_point now);
  /// Ends every connection of a job the registry evicted (their receive
  /// threads close them), telling each rank why.
  void end_evicted(const std::shared_ptr<Job>& job, const std::string& why);

  Config cfg_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<PipePool> pipes_;
  JobMemoryShare share_;
  /// The pools' regions, announced to the links (registered once per RDMA
  /// device); withdrawn before pool_ unmaps them.
  std::vector<proto::RegionAnnouncement> pool_regions_;
  JobRegistry registry_;
  std::shared_ptr<const proto::auth::HostKey> keys_;  // sealed job keys are opened with it
  std::vector<std::unique_ptr<proto::auth::MungeVerifier>> munge_;  // per side, --auth munge
  LogLimiter warn_limiter_{10, 10, std::chrono::seconds(10)};
  LogLimiter info_limiter_{5, 2, std::chrono::seconds(60)};
  std::vector<std::unique_ptr<Side>> sides_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> next_conn_id_{1};
  std::atomic<int> parked_{0};  // connections parked by the global budget
  std::atomic<std::uint64_t> frames_relayed_{0}, bytes_relayed_{0}, connections_{0},
      protocol_errors_{0}, auth_failures_{0}, refused_admissions_{0}, timeouts_{0},
      accept_pauses_{0};
  std::atomic<std::uint64_t> open_conns_{0};
  std::atomic<bool> draining_{false};
  std::atomic<std::uint64_t> refused_draining_{0}, credit_stalls_{0}, memory_stalls_{0};
  // Issue 28: times a connection spent its control budget (its frames then
  // waited a round), PING answers dropped (one already queued), connections
  // not yet admitted closed to make room at --max-connections.
  std::atomic<std::uint64_t> control_deferrals_{0}, pings_dropped_{0}, unadmitted_evicted_{0};
  std::uint64_t reported_dropped_ = 0, reported_deferred_ = 0;  // sweep of side 0 only
  std::chrono::steady_clock::time_point control_report_at_ = std::chrono::steady_clock::now();
  // Connections not yet admitted, oldest first (weak: a closed or admitted
  // one is skipped); make_room_for_connection closes from the front.
  std::mutex unadmitted_mu_;
  std::deque<std::weak_ptr<Connection>> unadmitted_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

}  // namespace zipper::forwarder
