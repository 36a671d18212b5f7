// One connection's share of PING answers: a token bucket, kept
// as a generic cell rate algorithm (GCRA, ATM's policer: one "theoretical
// arrival time" instead of a token count and a refill timestamp).
//
// Why PINGs need a share of their own: zipperd answers a PING itself, so no
// destination's credit or reading speed ever pushes back on the sender, and
// a PING's credit comes back at once. The per-round ControlBudget only
// spreads the receive loop's time between connections; a rank sending PINGs
// as fast as its socket takes them still kept its side's receive thread busy
// on every round (a full core), and on a host where ranks and zipperd share
// cores that slowed other jobs' round trips 10-30x. A libmmpi rank has one
// PING out at a time and sends one only after timeout/4 of silence
// (client/rails.cpp: at most a few per second at MMPI_FORWARDER_TIMEOUT's
// default of 3000 ms, 40/s at 100 ms), so a share of `--ping-rate` per
// second never touches a legitimate rank. A PING over the share is dropped
// before any credit, memory or answer is spent on it, and the connection is
// not read again until its next token is due (recv_loop's timed backlog):
// what the flooder sends then waits in its own socket, and TCP backpressure
// stops it without zipperd spending a cycle.
//
// Pure logic (the clock is an argument): receive thread of the connection only.
#pragma once

#include <chrono>
#include <cstdint>

namespace zipper::forwarder {

class PingShare {
 public:
  using Clock = std::chrono::steady_clock;

  /// `per_second`: PINGs answered per second in the long run (0: no share,
  /// every PING is taken). `burst`: PINGs taken back to back after a quiet
  /// spell (>= 1).
  PingShare(std::uint32_t per_second, std::uint32_t burst)
      : interval_(per_second ? std::chrono::nanoseconds(1'000'000'000 / per_second)
                             : Clock::duration::zero()),
        tolerance_(interval_ * ((burst ? burst : 1) - 1)) {}

  /// Takes a token for a PING seen at `now`. False: the connection is over
  /// its share; nothing is charged.
  bool take(Clock::time_point now) {
    if (interval_ == Clock::duration::zero()) return true;
    if (tat_ < now) tat_ = now;
    if (tat_ - now > tolerance_) return false;
    tat_ += interval_;
    return true;
  }

  /// The earliest time at which take() succeeds again (<= now: at once).
  Clock::time_point next_token() const { return tat_ - tolerance_; }

  /// Nanoseconds between two tokens in the long run (0: no share).
  Clock::duration interval() const { return interval_; }

 private:
  Clock::duration interval_;
  Clock::duration tolerance_;  // (burst - 1) intervals of credit a quiet connection saves
  Clock::time_point tat_{};    // theoretical arrival time of the next PING
};

}  // namespace zipper::forwarder
