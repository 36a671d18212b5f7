// One virtual rank: a channel to each zipperd (libmmpi's client::Channel:
// admission with the pinned host key and the job key, credits), the
// messages its pattern gives it to send, and the checks of every message it
// receives (from a source of its pattern, next in that pair's sequence,
// every payload byte as sent).
//
// A pair's messages all take one zipperd, the sender's position in its
// group mod k (as libmmpi's rails do), so each pair stays in order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../../client/channel.h"
#include "run_errors.h"
#include "run_stats.h"

namespace zipper::loadgen {

class VirtualJob;

class VirtualRank final : public client::FrameHandler {
 public:
  /// `id`: unique in the worker, for its epoll entries (never reused).
  VirtualRank(VirtualJob& job, std::uint32_t vrank, std::uint64_t id, GroupStats& stats,
              RunErrors& errors);
  ~VirtualRank() override;

  std::uint64_t id() const { return id_; }
  std::uint32_t vrank() const { return vrank_; }
  VirtualJob& job() const { return job_; }
  int rails() const { return static_cast<int>(rails_.size()); }
  int poll_fd(int rail) const { return rails_[rail]->poll_fd(); }

  /// Connects rail `rail` and sends HELLO (blocking TCP connect; the
  /// handshake then runs in progress()). False, with the fault recorded, on failure.
  bool begin_connect(int rail, int timeout_ms);
  /// One round of `rail`: receives (frames go through the checks) and sends.
  void progress(int rail);
  /// The worker's edge-triggered epoll saw `rail` hang up (Channel::note_peer_hangup).
  void note_peer_hangup(int rail) { rails_[rail]->note_peer_hangup(); }
  /// Rails that zipperd admitted since the last call.
  int take_newly_admitted();
  /// Every rail saw JOB_READY.
  bool ready() const;
  /// Starts this rank's traffic at `now` (ns).
  void start_traffic(std::uint64_t now);
  /// Sends what the pattern, the credit and the rate allow now. Returns when
  /// the rate lets it send next (ns), or 0 when only a frame can unblock it.
  std::uint64_t pump(std::uint64_t now);
  /// Everything sent and everything expected received.
  bool traffic_done() const { return sent_ == send_total_ && received_ == recv_total_; }
  /// Says BYE on every rail; closed() once zipperd closed them all.
  void begin_close();
  bool closed() const;
  /// What it still waits for (for a timeout's message).
  std::string waiting_for() const;

  /// Worker bookkeeping: whether this rank was counted in its job's tallies.
  bool counted_ready = false, counted_done = false, counted_closed = false;
  /// When the worker's rate timer for this rank fires (0: none set).
  std::uint64_t timer_ns = 0;

 private:
  // client::FrameHandler
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& h) override;
  void on_data_frame(const proto::FrameHeader& h, proto::Payload payload) override;
  bool on_peer_gone(int vrank, const std::string& why) override;
  void on_link_failed() override;
  void on_draining() override;
  void on_abort(int from, int code) override;

  void fail(const std::string& what);
  void send_one(std::uint64_t now);

  VirtualJob& job_;
  const std::uint32_t vrank_;
  const std::uint64_t id_;
  GroupStats& stats_;
  RunErrors& errors_;
  const bool high_;
  const int send_rail_;
  std::vector<std::unique_ptr<client::Channel>> rails_;
  std::vector<std::uint64_t> connect_ns_;         // per rail: when connecting began (0: admitted)
  std::vector<std::vector<std::byte>> recv_buf_;  // per rail: where a payload lands
  int current_rail_ = 0;
  int newly_admitted_ = 0;
  bool closing_ = false;

  // Sending: message n goes to destination n % dests, with sequence number
  // n / dests + 1, so each pair's sequence counts 1, 2, 3 ...
  std::uint32_t dests_ = 0;
  std::uint64_t send_total_ = 0, sent_ = 0;
  std::uint64_t allowance_ = 0;  // messages it may send now (pingpong: after each answer)
  std::uint64_t interval_ns_ = 0, next_send_ns_ = 0;  // the rate (0: none)
  bool traffic_ = false;
  // Receiving: the next sequence number expected from each source.
  std::vector<std::uint64_t> expect_;
  std::uint64_t recv_total_ = 0, received_ = 0;
};

}  // namespace zipper::loadgen
