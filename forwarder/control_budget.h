// A connection's share of one receive round for frames without payload
// (PING, CTS, a BYE, an empty EAGER...). Data frames are bounded by
// credit (--conn-credits): a sender must wait for its frames to leave zipperd.
// A frame without payload gives its credit back at once, so nothing else
// bounds how many of them one socket can make the receive loop handle: a
// rank sending PINGs as fast as it can kept one receive thread on its socket
// for seconds. With this budget a connection handles at most `per_round` such
// frames per round of its side's loop, then waits for the next round while
// the loop serves the others (round robin, as LNet's per-peer credits keep
// one peer from starving the rest of a router). One rank's flood slows only
// that rank: what it sends waits in its own socket (TCP backpressure).
//
// Pure logic (no clock, no I/O): receive thread of the connection only.
#pragma once

#include <cstdint>

namespace zipper::forwarder {

class ControlBudget {
 public:
  /// `per_round`: frames without payload taken per round (>= 1).
  explicit ControlBudget(std::uint32_t per_round) : per_round_(per_round ? per_round : 1) {}

  /// Charges a frame of `payload_len` bytes seen in receive round `round`
  /// (a counter that only grows). True: take it now. False: the connection
  /// spent this round's share; leave the frame unread until a later round.
  bool charge(std::uint64_t round, std::uint32_t payload_len) {
    if (payload_len > 0) return true;
    if (round != round_) {
      round_ = round;
      used_ = 0;
    }
    if (used_ >= per_round_) return false;
    ++used_;
    return true;
  }
  std::uint32_t per_round() const { return per_round_; }

 private:
  std::uint32_t per_round_;
  std::uint64_t round_ = ~std::uint64_t{0};
  std::uint32_t used_ = 0;
};

}  // namespace zipper::forwarder
