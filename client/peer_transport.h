// libmmpi's delivery layer, between the matching engine (engine.h) and the
// rails (rails.h): it carries each pair's EAGER, RTS, CTS and CHUNK frames
// to the peer and owns what makes that delivery ordered and reliable. The
// engine above it keeps matching, the native bridge and the protocol
// choice (eager or rendezvous); the rails below it keep the links.
//
// It owns, per pair (this rank and one world rank of the other cluster):
//   - sequence numbers: EAGER and RTS headers are numbered per pair and
//     handed up in that order (MPI's non-overtaking rule);
//   - the rendezvous stream: once the CTS says how many bytes the receiver
//     takes, the chunks go out, and the send completes.
// With one rail it passes frames straight through: one link carries the
// pair in order, chunks are queued at once and paced by credit, a send
// completes once written, and a failed link ends the job.
//
// With k > 1 rails it also acknowledges end to end, so that a failed
// forwarder loses nothing and duplicates nothing (after Lustre LNet's health
// and resend, with end-to-end state as TCP keeps it):
//   Sender, per peer:
//   - the pair's EAGER and RTS frames take one rail (the sender's index in
//     its cluster mod k); chunks take any rail with credit;
//   - EAGER: a copy of the message is kept until the peer's cumulative ACK
//     covers its sequence number (bounded: MMPI_RETRANSMIT_BYTES; beyond it a
//     send uses the rendezvous instead);
//   - rendezvous: the user's buffer until the peer's FIN for that message
//     (the send completes then); each chunk records the rail it crossed.
//   Receiver, per peer:
//   - an EAGER or RTS header that comes early (it overtook on another rail
//     after a failover) waits in a hold; one already seen is a duplicate:
//     answered (ACK, or FIN for a message complete, or the CTS again for one
//     still arriving) and dropped; a CHUNK at an offset already in is dropped;
//   - ACK after 16 headers or 1 ms, FIN at once.
//   Resending: when a rail fails (link closed or reset, no PING answer,
//   drained) or a peer is gone from one forwarder, everything not
//   acknowledged to the peers concerned is sent again in sequence order on
//   another rail, and the chunks that crossed the failed rail are posted
//   again. Data unacknowledged for MMPI_FORWARDER_TIMEOUT is resent the same
//   way (lost acknowledgements).
//
// ACK and FIN travel as CTS frames with a flag (proto::kCtsAck, kCtsFin)
// rather than as frame types of their own: zipperd relays, credits and
// validates a CTS like any client-to-client control frame without looking
// at its flags, so striping over several forwarders needed no zipperd
// change and a client that stripes works through any zipperd of this
// protocol version. They are told apart here, in one place (on_data_frame).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../proto/link.h"
#include "rail_port.h"
#include "send_stream.h"
#include "sites.h"

namespace zipper::client {

/// How a duplicate RTS stands at the receiver.
enum class RtsState : std::uint8_t {
  kArriving,    // matched, chunks still coming: the CTS again
  kUnexpected,  // not matched yet: nothing to answer but the ACK
  kDone,        // received whole: the FIN again
};

/// What the delivery layer hands up to the matching engine (Engine implements it).
class DeliveryHandler {
 public:
  virtual ~DeliveryHandler() = default;
  /// The header of an EAGER or RTS frame, next in its pair's order, is in
  /// on `rail`: match it now. Where its payload lands (nullopt: a buffer of
  /// its own).
  virtual std::optional<proto::Payload> header_in_order(int rail, const proto::FrameHeader& h) = 0;
  /// That frame is whole (rail < 0: a frame released from the hold, whose
  /// header was not matched).
  virtual void message_in_order(int rail, const proto::FrameHeader& h, proto::Payload payload) = 0;
  /// Where a CHUNK's payload lands; nullopt when no receive takes it.
  virtual std::optional<proto::Payload> chunk_dest(const proto::FrameHeader& h) = 0;
  /// A CHUNK for a rendezvous receive (fails the job on one no receive
  /// takes); true when it completed the message.
  virtual bool chunk_in(const proto::FrameHeader& h) = 0;
  /// How the rendezvous receive of message `seq` from `src` stands;
  /// *accepted: the bytes its CTS accepted (kArriving).
  virtual RtsState rts_state(int src, std::uint64_t seq, std::uint64_t* accepted) = 0;
  /// A send handed down (send_eager, send_rts) completed.
  virtual void send_complete(Request* owner) = 0;
  /// World rank `vrank` can no longer be reached (no rail leads to it).
  virtual void peer_gone(int vrank, const std::string& why) = 0;
  /// No rail is left.
  virtual void link_failed() = 0;
};

/// How an EAGER/RTS header stands against its pair's next sequence number.
enum class HeaderOrder : std::uint8_t { kInOrder, kDuplicate, kEarly };

/// Headers after which an ACK goes out at once.
inline constexpr std::uint64_t kAckEvery = 16;
/// Longest an ACK waits for more headers to cover.
inline constexpr std::chrono::microseconds kAckDelay{1000};

class PeerTransport final : public RailHandler {
 public:
  /// This process is world rank `rank` of `sites.world_size()`; the world
  /// ranks of its own site (sites.is_local) are never peers.
  /// `retransmit_bytes`: eager bytes kept for resending (several rails only).
  /// `resend_after_ms`: unacknowledged this long, resend (several rails only).
  PeerTransport(RailPort& rails, DeliveryHandler& up, int rank, const SiteMap& sites,
                std::uint64_t retransmit_bytes, int resend_after_ms);

  /// With several rails: acknowledgements and resends are owed even while
  /// nobody waits on an inter-cluster request.
  bool acknowledging() const { return !straight_; }

  // ---- sender --------------------------------------------------------------
  /// The sequence number of the next EAGER or RTS to `peer`.
  std::uint64_t next_seq(int peer) { return next_send_seq_[static_cast<std::size_t>(peer)]++; }
  /// An EAGER message of `bytes` may be sent (with several rails its copy
  /// must fit MMPI_RETRANSMIT_BYTES).
  bool may_send_eager(std::uint64_t bytes) const {
    return straight_ || retained_bytes_ + bytes <= retransmit_limit_;
  }
  /// Sends an EAGER frame (header filled, payload borrowed from the user's
  /// buffer). `owner` completes once the buffer is free again.
  void send_eager(proto::OutFrame f, Request* owner);
  /// Sends the RTS of `s` (peer, seq, tag, context, data, bytes, owner
  /// filled); the chunks follow the CTS, and s->owner completes after them.
  void send_rts(SendStream* s);
  /// Sends `peer` the CTS for its message `seq`, accepting `accepted` bytes.
  void send_cts(int peer, std::int32_t tag, std::uint64_t seq, std::uint64_t accepted);
  /// The rendezvous message `seq` from `peer` is in whole (FIN with several rails).
  void rendezvous_received(int peer, std::uint64_t seq);

  // ---- state ---------------------------------------------------------------
  /// Timers: ACKs due, resends of what stayed unacknowledged, chunks
  /// waiting for credit. Nothing with one rail.
  void tick();
  /// Everything sent is acknowledged (always with one rail).
  bool acknowledged() const { return straight_ || (streams_.empty() && retained_copies_ == 0); }
  /// Sends the ACKs still due (before the rails close).
  void send_due_acks();
  /// Forgets everything towards `peer`; returns the sends that had not
  /// completed (the caller fails them).
  std::vector<Request*> drop_peer(int peer);
  /// Forgets everything towards every peer (no rail is left; the caller
  /// fails every send).
  void drop_all();

  // ---- RailHandler ---------------------------------------------------------
  std::optional<proto::Payload> payload_dest(int rail, const proto::FrameHeader& h) override;
  void on_data_frame(int rail, const proto::FrameHeader& h, proto::Payload payload) override;
  bool on_peer_gone(int rail, int vrank, const std::string& why) override;
  void on_rail_failed(int rail) override;
  void on_rail_draining(int rail) override;
  void on_rail_rejoined(int rail) override;
  void on_link_failed() override;

 private:
  /// An EAGER message kept until acknowledged.
  struct EagerCopy {
    proto::FrameHeader hdr;
    std::shared_ptr<std::vector<std::byte>> bytes;
  };
  /// Sender state towards one peer (several rails).
  struct PeerTx {
    int rail = -1;                // the pair's rail; -1: choose at the next send
    std::uint64_t avoid = 0;      // bit i: the peer is gone from rail i's zipperd
    std::deque<EagerCopy> eager;  // in sequence order
    std::uint64_t acked = 0;      // the peer has every header below this
    std::chrono::steady_clock::time_point last_tx{};  // oldest unacknowledged (re)send
  };
  /// An EAGER/RTS frame that came before its turn.
  struct HeldFrame {
    proto::FrameHeader hdr;
    proto::Payload payload;
  };
  /// Receiver state towards one peer (several rails).
  struct PeerRx {
    std::uint64_t acked_sent = 0;  // what our last ACK said
    std::chrono::steady_clock::time_point due{};
    bool ack_pending = false;
    std::map<std::uint64_t, HeldFrame> held;  // by sequence number
  };

  bool peer_world(int w) const { return w >= 0 && w < world_size_ && !sites_.is_local(w); }
  /// This process's position in its own site.
  int local_index() const { return rank_ - sites_.local_ranks().first; }
  void fail_all(const std::string& why);
  std::vector<Request*> drop(int peer, bool link_lost);
  void send_pair(int peer, proto::OutFrame f);
  void send_fin(int peer, std::uint64_t seq);
  void send_ack(int peer);
  void keep_eager_copy(const proto::OutFrame& f);
  void on_cts(int peer, const proto::FrameHeader& h);
  void on_ack(int peer, std::uint64_t upto);
  void on_fin(int peer, std::uint64_t seq);
  void on_chunk(const proto::FrameHeader& h);
  void finish(SendStream* s);
  void pump_chunks();
  void resend_to(int peer, int failed_rail);
  void on_duplicate(const proto::FrameHeader& h);
  void hold(const proto::FrameHeader& h, proto::Payload payload);
  void release_held(int src);
  void header_arrived(int src);

  RailPort& rails_;
  DeliveryHandler& up_;
  const SiteMap sites_;
  int rank_ = 0, world_size_ = 1;
  const bool straight_;  // one rail: no acknowledgements
  const std::uint64_t retransmit_limit_;
  const std::chrono::milliseconds resend_after_;

  std::vector<std::uint64_t> next_send_seq_, next_recv_seq_;  // per world rank
  // Per rail: how the EAGER/RTS header being read on it stood in its pair's order.
  std::vector<HeaderOrder> header_order_;
  // Rendezvous sends from RTS to completion, by (peer, seq).
  std::map<std::pair<int, std::uint64_t>, SendStream*> streams_;
  std::vector<SendStream*> streaming_;  // with chunks to post

  // Several rails.
  std::vector<PeerTx> tx_;  // per world rank
  std::vector<PeerRx> rx_;
  std::uint64_t retained_bytes_ = 0;  // in the EAGER copies kept (MMPI_RETRANSMIT_BYTES)
  std::size_t retained_copies_ = 0;   // EAGER copies kept, empty messages included
  std::map<std::pair<int, std::uint64_t>, std::set<std::uint64_t>> chunks_in_;  // offsets in
  std::vector<int> ack_due_;                                                    // peers owed an ACK
  std::chrono::steady_clock::time_point next_tick_{};
};

}  // namespace zipper::client
