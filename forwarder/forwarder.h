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
// Collaborators, each with its own header: Admission (HELLO/AUTH, MUNGE,
// drain, eviction), FlowControl (credit, memory shares, parking, credit
// return), route() in router.h (the destination of a frame), Counters in
// stats.h, Side (a listener's loops and connections), ConnectionSink (one
// connection's receive). They reach back only through ConnectionHost.
// Forwarder wires them together: forwarder.cpp (start, stop), event_loops.cpp
// (the epoll loops), connections.cpp (accept, EMFILE pauses, close),
// relay.cpp (dispatch and cut-through), timeouts.cpp (sweeps), forwarder_snapshot.cpp
// (the snapshot). Work that grows with a job (a closed connection's
// bookkeeping, notices to every rank) runs on the reaper thread (reaper.h),
// never on a relay thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../proto/link.h"
#include "../proto/memory_regions.h"
#include "admission.h"
#include "connection.h"
#include "connection_host.h"
#include "flow_control.h"
#include "forwarder_config.h"
#include "job_registry.h"
#include "rate_limited_log.h"
#include "reaper.h"
#include "snapshot.h"
#include "stats.h"
#include "tenant_ping_share.h"

namespace zipper::forwarder {

struct Side;

class Forwarder final : private ConnectionHost {
 public:
  /// Validates `cfg` (check_config: throws std::invalid_argument with a
  /// clear message) and maps the pools.
  explicit Forwarder(Config cfg);
  ~Forwarder() override;
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
  const proto::auth::Key& host_public_key() const { return admission_->host_public_key(); }

  /// Counters of sides, jobs (active and recently finished), connections and
  /// pools, for zipperctl and /metrics. Thread-safe; takes the side and
  /// registry locks briefly.
  Snapshot snapshot() const;
  /// Draining (Admission::set_draining): new jobs are refused, running ones
  /// finish.
  void set_draining(bool on) { admission_->set_draining(on); }
  bool draining() const { return admission_->draining(); }
  /// One counter per receive and send loop, advanced on every round (a round
  /// ends at least every 500 ms while the loop is healthy). The watchdog
  /// compares two readings to prove the loops are alive.
  std::vector<std::uint64_t> loop_rounds() const;

 private:
  // ConnectionHost
  void on_frame(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr,
                proto::Payload payload) override;
  void close_conn(const std::shared_ptr<Connection>& conn, const std::string& why) override;
  void wake_receivers() override;
  void defer(std::function<void()> task) override { reaper_.post(std::move(task)); }
  /// This forwarder as its collaborators see it (a private base).
  ConnectionHost& host() { return *this; }

  void recv_loop(Side& side);
  void send_loop(Side& side);
  void accept_all(Side& side);
  void progress_conn(Side& side, const std::shared_ptr<Connection>& conn);
  /// Reads again the connections whose PING share paused them and whose next
  /// token is due; returns the epoll timeout (ms, <= `cap_ms`) until the next.
  int resume_ping_waits(Side& side, int cap_ms);
  /// Relays a data frame of an admitted rank to its destination (cut-through).
  void relay(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr,
             proto::Payload payload);
  /// An admitted rank's ABORT (MMPI_Abort): refused and counted unless it
  /// names the connection's own job and rank; else, once per job, relayed to
  /// every rank of the other cluster (error code in `tag`).
  void relay_abort(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr);
  /// Answers a client's PING (one answer queued at a time).
  void answer_ping(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr);
  void sweep(Side& side);
  /// The rest of close_conn, on the reaper thread: the socket, the
  /// departure notice, the log lines (`finished`: it was the job's last rank).
  void finish_close(const std::shared_ptr<Connection>& conn, const std::string& why, bool finished);
  /// Counts `conn`'s departure without BYE for its job's next coalesced
  /// notice (reaper thread): the first of a window schedules it.
  void note_departure(const std::shared_ptr<Connection>& conn, const std::string& why);
  /// Tells the ranks of `job` still there about the departures gathered in
  /// the window: one notice per rank for the first departures, then one
  /// saying the job is broken, then none (Job::depart_unannounced).
  void announce_departures(const std::shared_ptr<Job>& job);
  /// Puts a parked connection on its side's parked list (receive thread).
  void note_parked(Side& side, const std::shared_ptr<Connection>& conn);
  /// Retries the parked connections of `side`: those whose wait may be over
  /// (FlowControl::may_retry), or all of them (`all`, the sweep: shares
  /// change as jobs come and go). Receive thread.
  void retry_parked(Side& side, bool all);
  /// Closes what the deadlines of `side` say is due (sweep).
  void expire_due(Side& side, std::chrono::steady_clock::time_point now);
  void pause_accepting(Side& side, int err);
  /// The job ended: one info line with its duration and bytes.
  void log_job_end(const Job& job);
  void note_protocol_error(const std::shared_ptr<Connection>& conn);
  /// At --max-connections: closes the oldest connection not yet admitted
  /// (any side), else evicts an idle job (JobRegistry::evict_idle). False
  /// when neither exists and the new connection must be refused.
  bool make_room_for_connection();
  /// Logs what the control budget deferred and PINGs dropped (sweep of side 0).
  void report_control_drops(std::chrono::steady_clock::time_point now);

  // Declared in the order they are built: each collaborator uses only those
  // above it, and payloads still queued at destruction return their buffers
  // to flow_ before it goes.
  Config cfg_;
  RateLimitedLog log_;
  Counters counters_;
  std::unique_ptr<FlowControl> flow_;
  /// The pools' regions, announced to the links (registered once per RDMA
  /// device); withdrawn before flow_ unmaps them.
  std::vector<proto::RegionAnnouncement> pool_regions_;
  JobRegistry registry_;
  std::unique_ptr<Admission> admission_;
  std::vector<std::unique_ptr<Side>> sides_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> next_conn_id_{1};
  std::atomic<std::uint64_t> open_conns_{0};
  std::uint64_t reported_dropped_ = 0, reported_deferred_ = 0;  // sweep of side 0 only
  std::chrono::steady_clock::time_point control_report_at_ = std::chrono::steady_clock::now();
  // Connections not yet admitted, oldest first (weak: a closed or admitted
  // one is skipped); make_room_for_connection closes from the front.
  std::mutex unadmitted_mu_;
  std::deque<std::weak_ptr<Connection>> unadmitted_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  /// Each tenant's share of PING answers (--tenant-ping-rate).
  TenantPingShares tenant_pings_;
  /// Departures of one job within this window make one notice.
  static constexpr auto kDepartureWindow = std::chrono::milliseconds(50);
  /// A job of at least this many ranks gives its freed heap back (malloc_trim) when it ends.
  static constexpr std::uint32_t kTrimAfterRanks = 256;
  // Last: its tasks use the members above, and it runs what is queued
  // before they go (stop()).
  Reaper reaper_;
};

}  // namespace zipper::forwarder
