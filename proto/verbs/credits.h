// Receive-credit accounting of one verbs link (both directions).
//
// Each side pre-posts `buffers` receive buffers and tells the peer how many.
// One credit = one posted receive buffer at the peer: a SEND is only posted
// while a credit is held, so the peer never runs out of posted receives and
// receiver-not-ready (RNR) cannot happen by design. The receiver returns a
// credit after reposting the buffer, piggybacked on the next outgoing SEND
// (immediate data) or, when it has nothing to send and at least `threshold`
// credits are owed, in an explicit credit message.
//
// Deadlock freedom: data SENDs keep one credit in reserve; only credit
// messages may use it. A sender stuck with <= 1 credit means the peer owes it
// at least buffers-1 >= threshold credits, so the peer sends a credit message
// (it always holds its own reserve credit for that).
//
// Pure logic, no verbs calls: unit-tested without a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace zipper::proto::verbs {

/// Largest credit count one message returns (16 bits of immediate data).
inline constexpr std::uint32_t kMaxCreditsPerMessage = 0xFFFF;
/// Fewest receive buffers a link accepts (the reserve rule needs >= 4).
inline constexpr std::uint32_t kMinBuffers = 4;

class BufferCredits {
 public:
  /// peer_buffers: receives the peer pre-posted for us (our initial credits);
  /// own_buffers: receives we pre-posted for the peer.
  BufferCredits(std::uint32_t peer_buffers, std::uint32_t own_buffers)
      : peer_buffers_(peer_buffers),
        credits_(peer_buffers),
        threshold_(std::max<std::uint32_t>(2, own_buffers / 2)) {}

  /// Sender: may post a data SEND now (keeps the reserve credit).
  bool can_send_data() const { return credits_ > 1; }
  /// Sender: an explicit credit message is due and may be posted now.
  bool credit_message_due() const { return owed_ >= threshold_ && credits_ >= 1; }
  /// Sender: consumes one credit for a SEND and returns the credits to
  /// piggyback on it (all that are owed, up to kMaxCreditsPerMessage).
  std::uint32_t on_send() {
    --credits_;
    const std::uint32_t r = std::min(owed_, kMaxCreditsPerMessage);
    owed_ -= r;
    return r;
  }
  /// Sender: the peer returned `n` credits. False if that exceeds what the
  /// peer could possibly owe (a protocol violation).
  bool on_returned(std::uint32_t n) {
    if (static_cast<std::uint64_t>(credits_) + n > peer_buffers_) return false;
    credits_ += n;
    return true;
  }
  /// Receiver: one of our receive buffers was consumed and reposted.
  void on_reposted() { ++owed_; }

  std::uint32_t credits() const { return credits_; }
  std::uint32_t owed() const { return owed_; }
  std::uint32_t threshold() const { return threshold_; }

 private:
  std::uint32_t peer_buffers_;
  std::uint32_t credits_;   // SENDs we may still post
  std::uint32_t owed_ = 0;  // credits we owe the peer (reposted, not yet returned)
  std::uint32_t threshold_;
};

}  // namespace zipper::proto::verbs
