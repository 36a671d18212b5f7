// Credit accounting for one client connection, as in Lustre LNet peer
// credits: credit is counted in frames (each frame holds one pool buffer,
// whatever its size), and the client may have at most `granted` frames
// inside zipperd (--conn-credits); zipperd returns a frame's credit once it
// has written the frame onwards (or dropped it). The constructor's argument
// is that number of frames, despite its name.
#pragma once

#include <atomic>
#include <cstdint>

namespace zipper::forwarder {

class CreditAccount {
 public:
  explicit CreditAccount(std::uint64_t granted_bytes) : granted_(granted_bytes) {}

  /// Charges one incoming frame (`cost` frames, 1). False when the client
  /// overran its grant: a protocol violation.
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
