// Passive-target progress: a thread that serves the windows'
// active messages while the application computes outside MMPI calls, so
// that an MPI_Get from the other cluster does not wait for the target's
// next MPI call (ARMCI-MPI and Global Arrays depend on it).
//
// How it stays out of the application's way:
//   - it sleeps in poll() on the rails' descriptors (zipperd traffic wakes it
//     at once) and an eventfd (stop), with a timeout of `interval` for
//     traffic inside the cluster, which Open MPI offers no descriptor for;
//   - it progresses only while holding the engine's lock (engine.h), which
//     every MMPI call into the engine holds: while the application is inside
//     MMPI, the thread never waits for the lock (it naps, 50 us doubling up
//     to `interval`, and tries again), and the application serves by itself;
//   - it runs only the async-safe rounds of the progress list (the engine's
//     own and the windows'), never capi's schedules.
// Open MPI is initialised with MPI_THREAD_MULTIPLE for it (runtime.cpp).
//   - after a round that served a request it polls every 50 us for the next
//     10 ms (a stream of operations from a rank of the same cluster, which
//     has no descriptor, is served at that pace), then backs off to `interval`.
// It exists while at least one window does (Runtime::window_opened).
// Cost: one wake-up per `interval` while a window exists, each a lock and a
// round (a few microseconds), plus the rounds traffic asks for; see
// docs/rma.md. MMPI_RMA_PROGRESS=off turns it off.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace zipper::client {

class Engine;

namespace rma {

/// Requests served by any window of this process (rma_target.cpp counts):
/// the progress thread keeps polling quickly while it grows.
inline std::atomic<std::uint64_t> served{0};

class ProgressThread {
 public:
  /// Starts the thread. `interval`: the longest sleep between rounds.
  ProgressThread(Engine& engine, std::chrono::microseconds interval);
  /// Stops and joins the thread.
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  /// Rounds run so far (tests, diagnostics).
  std::uint64_t rounds() const { return rounds_.load(std::memory_order_relaxed); }

 private:
  void run();

  Engine& engine_;
  int interval_ms_;
  int wake_fd_ = -1;  // eventfd: written once to stop
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> rounds_{0};
  std::thread thread_;
};

}  // namespace rma
}  // namespace zipper::client
