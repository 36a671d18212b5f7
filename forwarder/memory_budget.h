// Global bound on payload bytes zipperd holds at once (all connections).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace zipper::forwarder {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::uint64_t limit_bytes) : limit_(limit_bytes) {}

  /// Reserves `n` bytes; false when that would exceed the limit.
  bool try_acquire(std::uint64_t n) {
    std::uint64_t cur = used_.load(std::memory_order_relaxed);
    do {
      if (cur + n > limit_) return false;
    } while (!used_.compare_exchange_weak(cur, cur + n, std::memory_order_acq_rel));
    std::uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (cur + n > peak && !peak_.compare_exchange_weak(peak, cur + n)) {
    }
    return true;
  }

  /// Returns `n` bytes and runs the release hook (which unparks receivers).
  void release(std::uint64_t n) {
    used_.fetch_sub(n, std::memory_order_acq_rel);
    if (on_release_) on_release_();
  }

  void set_on_release(std::function<void()> f) { on_release_ = std::move(f); }
  std::uint64_t limit() const { return limit_; }
  std::uint64_t used() const { return used_.load(); }
  std::uint64_t peak() const { return peak_.load(); }

 private:
  const std::uint64_t limit_;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<std::uint64_t> peak_{0};
  std::function<void()> on_release_;
};

}  // namespace zipper::forwarder
