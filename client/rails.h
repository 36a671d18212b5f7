// libmmpi's rails: one channel (channel.h) per bridge node of MMPI_FORWARDER
// ("A1,A2,..."; entry i is bridge node i), their health, and failover.
//
// Health (after Lustre LNet multi-rail): each rail has a health value,
// 1000 while it answers and 0 once it is out of use. A rail goes out when
// its link closes or resets, when zipperd does not answer a PING within
// MMPI_FORWARDER_TIMEOUT (ms), or when zipperd says it is draining. An out
// rail is retried with exponential backoff (0.5 s doubling to 8 s): a new
// connection that authenticates with the job's secret as at start; it
// rejoins once zipperd says every rank of the job is back (JOB_READY).
// A drained rail is not retried.
//
// What the frames on a failed rail meant, and resending them, is the
// delivery layer's (peer_transport.h); the rails only say which rail failed.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "channel.h"
#include "config.h"
#include "rail_port.h"

namespace zipper::client {

class Rails final : public RailPort {
 public:
  enum class State : std::uint8_t { kUp, kDraining, kOut, kJoining };

  /// One rail per comma-separated entry of cfg.forwarder. `timeout_ms`:
  /// MMPI_FORWARDER_TIMEOUT (0: no PING, failures seen only on the link).
  Rails(const ClientConfig& cfg, int rank, int timeout_ms);
  ~Rails();

  /// Connects every rail (channel.h: waits for JOB_READY). With several
  /// rails, a rail that cannot connect is left out (and retried) as long as
  /// one connects. False with error() set when none does.
  bool connect(RailHandler& h);
  /// Closes every rail (BYE, drain).
  void close();

  int size() const override { return static_cast<int>(rails_.size()); }
  /// Any rail usable.
  bool up() const;
  /// Rail `i` takes new frames (up or draining).
  bool usable(int i) const override;
  /// Rail `i` takes new pair traffic (up, not draining).
  bool preferred(int i) const;
  State state(int i) const;
  /// 0..1000 (see above).
  int health(int i) const;
  const std::string& error() const { return error_; }
  const std::string& address(int i) const;
  /// Smallest over the rails (bytes), fixed after connect().
  std::uint64_t eager_limit() const { return eager_limit_; }
  std::uint64_t chunk_size() const override { return chunk_size_; }

  /// The rail for the pair traffic of the sender whose index in its cluster
  /// is `local_index`: rail local_index mod k (Matsuda's n concurrent
  /// senders use different bridge nodes), else the next one taking pair
  /// traffic and not in `avoid` (bit i: rail i). -1 when none.
  int pair_rail(int local_index, std::uint64_t avoid) const override;
  /// A usable rail with free credit for the next rendezvous chunk, not in
  /// `avoid`, taking turns; -1 when every such rail waits for credit.
  int chunk_rail(std::uint64_t avoid) override;
  /// Queues `f` on rail `i` (channel.h: Channel::send).
  void send(int i, proto::OutFrame f) override;
  void flush() override;
  /// Rail `i` fails once its current receive call returned (channel.h).
  void fail_soon(int i, std::string why) override;
  /// One round on every rail: receive, send, health (PING, timeouts), rejoin.
  void progress(RailHandler& h);
  /// Descriptors a sleeping wait polls (the rails with a link).
  void poll_fds(std::vector<pollfd>* out) const;

  /// MMPI_Abort: sends ABORT with `code` on every rail in use (zipperd
  /// relays it to the other cluster's ranks) and waits until each has left
  /// this host, at most `wait`.
  void abort(int code, std::chrono::milliseconds wait);
  /// Called when a zipperd relays the other cluster's abort: rank `from`,
  /// error `code`. Meant to end this cluster (MPI_Abort); nullptr ignores it.
  void on_abort(std::function<void(int from, int code)> f) { on_abort_ = std::move(f); }

 private:
  struct Rail;
  class Adapter;
  void out_of_use(RailHandler& h, int i, const std::string& why, bool retry);
  void try_rejoin(int i);
  void flush_after_receive();
  void report(const std::string& msg) const;

  ClientConfig cfg_;
  int rank_ = 0;
  int timeout_ms_ = 0;
  std::vector<std::unique_ptr<Rail>> rails_;
  std::string error_;
  std::uint64_t eager_limit_ = 0, chunk_size_ = 0;
  int next_chunk_rail_ = 0;
  bool all_lost_ = false;
  std::function<void(int, int)> on_abort_;
};

}  // namespace zipper::client
