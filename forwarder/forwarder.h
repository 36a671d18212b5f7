// zipperd's core: relays frames between client connections arriving on one or
// more listeners (one per subnet).
//
// Threads: every listener ("side") has a receive thread and a send thread.
// A frame read on side A is written to its destination on side B directly by
// A's receive thread when B's socket takes it; whatever the socket does not
// take is finished by B's send thread on EPOLLOUT. A->B and B->A therefore use
// disjoint threads and never wait on each other (full duplex), and chunk i is
// written out while chunk i+1 is still being read (cut-through).
//
// Memory: each connection may hold at most `conn_credits` bytes inside
// zipperd (credit-based flow control, as in Lustre LNet), and all payloads
// together at most `max_memory` bytes; a receiver that finds the budget
// exhausted pauses that connection until memory is released.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../proto/link.h"
#include "job_registry.h"
#include "memory_budget.h"
#include "snapshot.h"

namespace zipper::forwarder {

struct Config {
  struct ListenSpec {
    std::string name;  // "A", "B", ...
    proto::Endpoint endpoint;
  };
  std::vector<ListenSpec> listen;
  std::uint32_t conn_credits = 8u << 20;  // bytes a client may have in flight inside zipperd
  std::uint64_t max_memory = 256u << 20;  // bytes of payload held at once, all connections
  std::uint32_t max_frame = 1u << 20;     // largest accepted payload (bytes)
  int hello_timeout_ms = 10000;           // a connection must say hello within this time
};

struct Stats {
  std::uint64_t frames_relayed = 0;
  std::uint64_t bytes_relayed = 0;  // payload bytes
  std::uint64_t connections = 0;    // accepted so far
  std::uint64_t protocol_errors = 0;
  std::uint64_t peak_memory = 0;  // bytes of payload held at once
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

  /// Counters of sides, jobs (active and recently finished), connections and
  /// pools, for zipperctl and /metrics. Thread-safe; takes the side and
  /// registry locks briefly.
  Snapshot snapshot() const;
  /// Draining: hellos of jobs not yet known are refused (kBadHello, "draining"),
  /// ranks of running jobs are still admitted; running jobs finish normally.
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
  void send_error(const std::shared_ptr<Connection>& conn, proto::ErrorCode code,
                  std::uint32_t about_rank, std::uint64_t seq, const std::string& text);
  void send_control(const std::shared_ptr<Connection>& conn, proto::OutFrame frame);
  void return_credit(const std::shared_ptr<Connection>& conn, std::uint64_t cost);
  void wake_all_receivers();
  void note_protocol_error(const std::shared_ptr<Connection>& conn);

  Config cfg_;
  MemoryBudget budget_;
  JobRegistry registry_;
  std::vector<std::unique_ptr<Side>> sides_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> next_conn_id_{1};
  std::atomic<int> parked_{0};
  std::atomic<std::uint64_t> frames_relayed_{0}, bytes_relayed_{0}, connections_{0},
      protocol_errors_{0};
  std::atomic<bool> draining_{false};
  std::atomic<std::uint64_t> refused_draining_{0}, credit_stalls_{0}, memory_stalls_{0};
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

}  // namespace zipper::forwarder
