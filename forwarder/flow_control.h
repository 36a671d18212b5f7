// Flow control in zipperd: what a frame costs on arrival and what its
// departure gives back. A frame is charged, before its payload is read, to
//   - the sender's credit (frames, frame_credits.h): overrunning it is a
//     protocol violation;
//   - the destination's inbound credit: at most --conn-credits frames wait
//     inside zipperd for one client, so a client that does not read cannot
//     fill the pools;
//   - its job's fair share of memory (job_memory_share.h) and of each pool
//     class, then a pool buffer (buffer_pool.h).
// A frame that cannot be charged parks its connection (ParkReason) until
// what it waits for is released; credit goes back to the sender in batches.
// The control budget (control_budget.h) is charged before all this, by the
// connection's sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "../proto/frame.h"
#include "../proto/link.h"
#include "buffer_pool.h"
#include "connection.h"
#include "connection_host.h"
#include "forwarder_config.h"
#include "job_memory_share.h"
#include "park_reason.h"
#include "pipe_pool.h"
#include "rate_limited_log.h"
#include "stats.h"

namespace zipper::forwarder {

class FlowControl {
 public:
  /// Maps the pools (cfg.pools, at most cfg.max_memory bytes; throws
  /// std::runtime_error when they cannot be mapped) and the splice pipes.
  /// `cfg` must have passed check_config. `counters`, `log` and `host` must
  /// outlive every payload reserve() hands out.
  FlowControl(const Config& cfg, Counters& counters, RateLimitedLog& log, ConnectionHost& host);
  FlowControl(const FlowControl&) = delete;
  FlowControl& operator=(const FlowControl&) = delete;

  /// Charges the frame `hdr` from admitted connection `conn` (receive thread
  /// of `conn`) and returns where its payload goes: a pool buffer whose
  /// release (the last reference, normally the destination's send queue)
  /// returns buffer, share and credit. nullopt: the connection must pause
  /// (conn->share_wait says for what), or, with *violation set, it overran
  /// its credit and was sent an ERROR (kCreditOverrun); it must be closed.
  std::optional<proto::Payload> reserve(const std::shared_ptr<Connection>& conn,
                                        const proto::FrameHeader& hdr, bool* violation);

  /// Parks (`paused`) or unparks `c` (receive thread of `c`, or close). The
  /// reason follows from the last failed reserve(): kJobShare when it waits
  /// for its own job, else kPoolMemory. Counted per reason, so a release
  /// wakes only the receivers that it can help.
  void park(Connection& c, bool paused);
  /// Whether a parked connection should retry at a wake-up: always for
  /// kPoolMemory, and for kJobShare only once its job released a frame
  /// since it parked (receive thread of `c`, under its side's lock).
  static bool may_retry(const Connection& c);

  /// Gives `cost` frames of credit back to `conn`, in a CREDIT frame once a
  /// quarter of its grant is due (smaller amounts ride on the next frame).
  void return_credit(const std::shared_ptr<Connection>& conn, std::uint64_t cost);
  /// Counts a receive that paused for lack of memory (the connection's and
  /// the process's memory_stalls).
  void note_memory_stall(Connection& c);
  /// Tells the shares how many jobs there are now (on join and leave).
  void set_jobs(std::uint64_t n) { share_.set_jobs(n); }
  /// Bytes one job may hold now (JobMemoryShare::share).
  std::uint64_t job_share() const { return share_.share(); }

  const BufferPool& pool() const { return *pool_; }
  const PipePool& pipes() const { return *pipes_; }

 private:
  /// A frame left zipperd: returns buffer, share, the destination's inbound
  /// credit and the sender's credit, and wakes whom it may help.
  void release(const std::weak_ptr<Connection>& sender, const std::weak_ptr<Connection>& dest,
               const std::shared_ptr<Job>& job, const std::optional<BufferPool::Buffer>& buf,
               std::uint64_t bytes, std::uint64_t cost);
  /// Sends kCreditOverrun to a client past its grant.
  void refuse_overrun(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr);

  const std::uint32_t conn_credits_;  // frames (--conn-credits)
  const std::uint32_t max_frame_;     // bytes (--max-frame)
  const bool splice_;
  Counters& counters_;
  RateLimitedLog& log_;
  ConnectionHost& host_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<PipePool> pipes_;
  JobMemoryShare share_;
  std::atomic<int> memory_parked_{0};  // connections parked with kPoolMemory
};

}  // namespace zipper::forwarder
