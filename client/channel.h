// libmmpi's channel to zipperd: the link, credits and the queues of frames
// waiting for them, the hello / challenge / job-ready handshake, draining at
// finalize, and failure of the link. It carries frames; what they mean
// (matching, eager, rendezvous) is the engine's (engine.h), which receives
// the data frames through FrameHandler.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "../proto/auth.h"
#include "../proto/link.h"
#include "config.h"

namespace zipper::client {

/// What the engine does with the frames the channel receives.
class FrameHandler {
 public:
  virtual ~FrameHandler() = default;
  /// Where the payload of an EAGER, RTS, CTS or CHUNK frame should land.
  virtual std::optional<proto::Payload> payload_dest(const proto::FrameHeader& h) = 0;
  /// An EAGER, RTS, CTS or CHUNK frame, whole.
  virtual void on_data_frame(const proto::FrameHeader& h, proto::Payload payload) = 0;
  /// zipperd says world rank `vrank` is gone. False when that makes no sense
  /// (then the channel treats the frame as a protocol failure).
  virtual bool on_peer_gone(int vrank, const std::string& why) = 0;
  /// The link failed and is closed: fail whatever waited on it.
  virtual void on_link_failed() = 0;
  /// zipperd said it is draining (proto::ErrorCode::kDraining).
  virtual void on_draining() {}
  /// zipperd relays rank `from`'s MPI_Abort with error `code` (the other
  /// cluster aborted the job). The default ignores it.
  virtual void on_abort(int /*from*/, int /*code*/) {}
};

class Channel {
 public:
  /// `rank`: this process's world rank, stamped into every frame it sends.
  /// `address`: entry `index` of MMPI_FORWARDER ([tcp:|verbs:]HOST:PORT).
  Channel(ClientConfig cfg, int rank, std::string address, int index)
      : cfg_(std::move(cfg)), rank_(rank), address_(std::move(address)), index_(index) {}

  /// Connects, says hello, answers the challenge and waits (up to the
  /// configured connect timeout) until every rank of the job has connected.
  /// Returns false and sets error() on failure.
  bool connect(FrameHandler& h);
  /// Starts connecting (the TCP connect waits at most `connect_ms`) and
  /// returns; progress() then runs the handshake until ready(). For a rail
  /// that rejoins (client/rails.h). False with error() set on failure.
  bool begin_connect(int connect_ms);
  /// Admitted, and every rank of the job has connected.
  bool ready() const { return link_ != nullptr && job_ready_; }
  const std::string& address() const { return address_; }
  /// Says BYE, lets queued frames out (up to 30 s) and drains zipperd's side
  /// (up to 10 s) before closing.
  void close(FrameHandler& h);
  /// close() without waiting, for a caller that runs many channels in one
  /// event loop (bench/loadgen): queues BYE; progress() then half-closes once
  /// every queued frame is out, and lets the link go, with no failure, when
  /// zipperd closes its side. The caller bounds the wait.
  void begin_close();
  /// begin_close() ran and the link is gone (zipperd closed its side, or the
  /// link failed: error() says which).
  bool closed() const { return closing_ && !link_; }
  /// zipperd admitted this rank (HELLO_ACK with a valid key confirmation);
  /// ready() adds that every rank of the job has connected.
  bool admitted() const { return link_ != nullptr && hello_acked_; }

  bool up() const { return link_ != nullptr; }
  const std::string& error() const { return error_; }
  int poll_fd() const { return link_ ? link_->poll_fd() : -1; }
  /// The link stops reading at a short read (Link::stop_at_short_read): a
  /// caller that waits on poll_fd() with an edge-triggered epoll calls this
  /// on EPOLLRDHUP, EPOLLHUP or EPOLLERR (a level-triggered poll needs not).
  void note_peer_hangup() {
    if (link_) link_->note_peer_hangup();
  }
  bool send_pending() const { return link_ && link_->send_pending(); }
  /// Negotiated with zipperd's largest payload (bytes).
  std::uint64_t eager_limit() const { return eager_limit_; }
  std::uint64_t chunk_size() const { return chunk_size_; }

  /// Queues a frame (job id and source stamped here). CTS frames overtake
  /// data frames waiting for credit; everything else keeps its order.
  void send(proto::OutFrame f);
  /// Pushes queued frames into the link now.
  void flush();
  /// One round: receive (handing data frames to `h`), then send.
  void progress(FrameHandler& h);
  /// Called from inside a FrameHandler callback: the link fails once the
  /// link's own call returned.
  void fail_soon(std::string why);
  bool failing() const { return !pending_failure_.empty(); }
  /// Closes the link at once (queued frames dropped) and calls
  /// h.on_link_failed(); error() says `why`.
  void fail_now(FrameHandler& h, const std::string& why) { failed(h, why); }

  /// MMPI_Abort: queues an ABORT carrying `code` ahead of everything else,
  /// without credit (zipperd takes it regardless), and starts writing it.
  /// False when the rank is not admitted on this channel (nothing sent).
  bool post_abort(int code);
  /// Writes what is left of the ABORT; true once the link is gone or the
  /// bytes left this host (the kernel's send queue is empty, so a reset
  /// when this process dies cannot discard them).
  bool abort_sent();

  /// Health (client/rails.h): sends a PING unless one is out; zipperd answers
  /// from its relay loop. Returns the time the outstanding PING was sent.
  std::chrono::steady_clock::time_point ping();
  bool ping_outstanding() const { return ping_out_; }
  /// When the last frame of any kind arrived (or the link came up).
  std::chrono::steady_clock::time_point last_heard() const { return last_heard_; }
  /// Frames this rank may still send before waiting for credit, less those queued.
  std::int64_t free_credit() const {
    return static_cast<std::int64_t>(credits_) -
           static_cast<std::int64_t>(credit_wait_.size() + control_wait_.size());
  }

 private:
  class Sink;
  void on_frame(FrameHandler& h, const proto::FrameHeader& hdr, proto::Payload payload);
  void answer_challenge(const proto::FrameHeader& h, const proto::Payload& payload);
  void flush_credit_wait();
  /// begin_close(): half-closes once the BYE and everything before it is out.
  void half_close_when_sent();
  bool waiting_for_credit() const { return !credit_wait_.empty() || !control_wait_.empty(); }
  void failed(FrameHandler& h, const std::string& why);
  void report(const std::string& msg) const;
  /// This rank's HELLO: job, world rank, site and the job's site table.
  proto::ConnectHello hello() const;
  /// Why the link failed, in one line (an end of another protocol version
  /// named as such).
  std::string link_failure() const;

  ClientConfig cfg_;
  int rank_ = 0;
  std::unique_ptr<proto::Link> link_;  // null in standalone mode or after a failure
  std::string error_;
  std::uint64_t credits_ = 0;                 // frames we may still send into zipperd
  std::deque<proto::OutFrame> credit_wait_;   // frames waiting for credit, in order
  std::deque<proto::OutFrame> control_wait_;  // CTS waiting for credit (sent first)
  std::uint64_t eager_limit_ = cfg_.eager_limit, chunk_size_ = cfg_.chunk_size;
  bool hello_acked_ = false, job_ready_ = false;
  bool closing_ = false, half_closed_ = false;  // begin_close() state
  std::string address_;                         // MMPI_FORWARDER entry, for messages
  int index_ = 0;                               // its position in MMPI_FORWARDER
  bool ping_out_ = false;
  std::uint64_t ping_seq_ = 0;
  std::chrono::steady_clock::time_point ping_sent_{}, last_heard_{};
  std::optional<proto::auth::ClientProof> proof_;  // what AUTH sent; HELLO_ACK confirms it
  std::string pending_failure_;                    // failure seen inside a receive callback
};

}  // namespace zipper::client
