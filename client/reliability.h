// End-to-end acknowledgement and resending when a rank stripes over several
// forwarders (rails.h), so that a failed forwarder loses nothing and
// duplicates nothing. With one forwarder none of this runs: the link is the
// only path, and its failure ends the job.
//
// Sender, per peer (world rank):
//   - EAGER: a copy of the message is kept until the peer's cumulative ACK
//     covers its sequence number (bounded: MMPI_RETRANSMIT_BYTES; beyond it a
//     send uses the rendezvous instead);
//   - rendezvous: the user's buffer until the peer's FIN for that message
//     (the send completes then); each chunk records the rail it crossed.
// Receiver, per peer:
//   - EAGER and RTS headers are taken in sequence order; one that comes
//     early (it overtook on another rail after a failover) waits in a hold,
//     one already seen is a duplicate: answered (ACK, or FIN for a message
//     complete, or the CTS again for one still arriving) and dropped;
//   - a CHUNK at an offset already in is dropped.
//   - ACK (CTS frame, flags proto::kCtsAck, seq = headers in so far) after
//     16 headers or 1 ms, FIN (flags proto::kCtsFin) at once.
// Resending: when a rail fails (link closed or reset, no PING answer, drained)
// or a peer is gone from one forwarder, everything not acknowledged to the
// peers concerned is sent again in sequence order on another rail, and the
// chunks that crossed the failed rail are posted again. Data unacknowledged
// for MMPI_FORWARDER_TIMEOUT is resent the same way (lost acknowledgements).
// After Lustre LNet's health and resend (lnet_health_sensitivity,
// lnet_transaction_timeout), with end-to-end state as TCP keeps it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "../proto/link.h"

namespace zipper::client {

/// How an EAGER/RTS header stands against its pair's next sequence number.
enum class HeaderOrder : std::uint8_t { kInOrder, kDuplicate, kEarly };

/// An EAGER message kept until acknowledged.
struct EagerCopy {
  proto::FrameHeader hdr;
  std::shared_ptr<std::vector<std::byte>> bytes;
};

/// Sender state towards one peer.
struct PeerTx {
  int rail = -1;                                    // the pair's rail; -1: choose at the next send
  std::uint64_t avoid = 0;                          // bit i: the peer is gone from rail i's zipperd
  std::deque<EagerCopy> eager;                      // in sequence order
  std::uint64_t acked = 0;                          // the peer has every header below this
  std::chrono::steady_clock::time_point last_tx{};  // oldest unacknowledged (re)send
};

/// An EAGER/RTS frame that came before its turn.
struct HeldFrame {
  proto::FrameHeader hdr;
  proto::Payload payload;
};

/// Receiver state towards one peer.
struct PeerRx {
  std::uint64_t acked_sent = 0;  // what our last ACK said
  std::chrono::steady_clock::time_point due{};
  bool ack_pending = false;
  std::map<std::uint64_t, HeldFrame> held;  // by sequence number
};

/// Headers after which an ACK goes out at once.
inline constexpr std::uint64_t kAckEvery = 16;
/// Longest an ACK waits for more headers to cover.
inline constexpr std::chrono::microseconds kAckDelay{1000};

}  // namespace zipper::client
