// Per-job fair share of zipperd's payload memory (--max-memory): while n jobs
// are registered, one job may hold at most max(limit / n, floor) bytes, so a
// job that pins memory (frames whose payload never arrives, a receiver that
// never reads) cannot starve the others. The buffer pools still bound
// the sum; this only decides whose turn it is.
#pragma once

#include <atomic>
#include <cstdint>

namespace zipper::forwarder {

class JobMemoryShare {
 public:
  /// `limit`: bytes shared by all jobs (--max-memory); `floor`: bytes a job
  /// may always hold, however many jobs there are (at least two frames, so
  /// every job can make progress).
  JobMemoryShare(std::uint64_t limit, std::uint64_t floor) : limit_(limit), floor_(floor) {}

  /// Number of registered jobs (updated by the forwarder on join and leave).
  void set_jobs(std::uint64_t n) { jobs_.store(n == 0 ? 1 : n, std::memory_order_relaxed); }
  /// Registered jobs (at least 1).
  std::uint32_t jobs() const {
    return static_cast<std::uint32_t>(jobs_.load(std::memory_order_relaxed));
  }
  /// Bytes one job may hold now.
  std::uint64_t share() const {
    const std::uint64_t s = limit_ / jobs_.load(std::memory_order_relaxed);
    return s < floor_ ? floor_ : s;
  }
  /// Charges `n` bytes to a job's counter; false (and nothing charged) when
  /// that would take the job past its share.
  bool try_acquire(std::atomic<std::uint64_t>& held, std::uint64_t n) const {
    const std::uint64_t cap = share();
    std::uint64_t cur = held.load(std::memory_order_relaxed);
    do {
      if (cur + n > cap) return false;
    } while (!held.compare_exchange_weak(cur, cur + n, std::memory_order_acq_rel));
    return true;
  }
  void release(std::atomic<std::uint64_t>& held, std::uint64_t n) const {
    held.fetch_sub(n, std::memory_order_acq_rel);
  }

 private:
  const std::uint64_t limit_;
  const std::uint64_t floor_;
  std::atomic<std::uint64_t> jobs_{1};
};

}  // namespace zipper::forwarder
