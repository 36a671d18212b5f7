// Credit of one client connection, counted in frames, as Lustre LNet's peer
// credits count router buffers: the client may have at most `granted` frames
// inside zipperd (each frame holds one pool buffer while there); zipperd
// returns a frame's credit once it has written the frame onwards (or dropped
// it). The wire's credit fields carry these frame counts (proto::credit_cost).
#pragma once

#include <atomic>
#include <cstdint>

namespace zipper::forwarder {

class FrameCredits {
 public:
  /// granted_frames: the connection's grant (--conn-credits), frames.
  explicit FrameCredits(std::uint64_t granted_frames) : granted_(granted_frames) {}

  /// Charges one incoming frame (`cost` frames). False when the client overran
  /// its grant: a protocol violation.
  bool charge(std::uint64_t cost) {
    const std::uint64_t in_use = in_use_.fetch_add(cost) + cost;
    return in_use <= granted_;
  }
  /// The frame left zipperd; its credit becomes returnable.
  void release(std::uint64_t cost) {
    in_use_.fetch_sub(cost);
    to_return_.fetch_add(cost);
  }
  /// Takes all credit waiting to be returned to the client (frames).
  std::uint64_t take_returnable() { return to_return_.exchange(0); }
  std::uint64_t returnable() const { return to_return_.load(); }
  std::uint64_t in_use() const { return in_use_.load(); }
  std::uint64_t granted() const { return granted_; }

 private:
  const std::uint64_t granted_;
  std::atomic<std::uint64_t> in_use_{0};
  std::atomic<std::uint64_t> to_return_{0};
};

}  // namespace zipper::forwarder
