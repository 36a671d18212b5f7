// Frames and payload bytes that passed one point of zipperd (a side, a
// connection, one direction of a job). Written by the receive threads with
// relaxed atomics: readers (zipperctl, /metrics) need totals, not ordering.
#pragma once

#include <atomic>
#include <cstdint>

namespace zipper::forwarder {

/// A plain copy of TrafficCounters at one instant.
struct Traffic {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;  // payload bytes (frame headers excluded)
};

class TrafficCounters {
 public:
  /// Counts one frame of `payload_bytes` bytes.
  void add(std::uint64_t payload_bytes) {
    frames_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(payload_bytes, std::memory_order_relaxed);
  }
  Traffic load() const {
    return {frames_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

}  // namespace zipper::forwarder
