// zipperd's reaper: one thread that finishes, off the relay threads, the work
// whose size grows with a job: a closed connection's bookkeeping, its socket's
// close and its departure notice; JOB_READY to every rank; the notices of an
// eviction or a drain.
//
// Why: a relay thread that did this work inline paid O(job size) for one
// event, and a job of thousands of ranks leaving at once (a node failure,
// a killed job) stalled every other job's frames on that thread for seconds.
// A relay thread now only marks a connection closed and posts it here
// (O(1)); the reaper runs the tasks in order.
//
// Delayed tasks (post_after) let callers coalesce: departures of one job
// within a short window become one notice to the ranks that remain.
//
// Thread-safe; tasks run on the reaper thread only, in post order (delayed
// ones at their time). stop() runs every task still queued, delayed ones at
// once, so nothing posted is lost.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace zipper::forwarder {

class Reaper {
 public:
  using Clock = std::chrono::steady_clock;
  using Task = std::function<void()>;

  Reaper() = default;
  ~Reaper() { stop(); }
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  /// Starts the thread (`on_start` runs first on it, e.g. to block signals).
  void start(std::function<void()> on_start = nullptr);
  /// Runs what is queued (delayed tasks at once) and joins. Idempotent. A
  /// task posted while the thread is not running (before start, after stop)
  /// runs at once on the calling thread.
  void stop();

  /// Queues `task` (O(1) for the caller).
  void post(Task task);
  /// Queues `task` to run `delay` from now, after the tasks posted before it
  /// becomes due.
  void post_after(Clock::duration delay, Task task);

  /// Tasks queued and not yet run (both kinds), for /metrics.
  std::uint64_t backlog() const;
  /// Tasks run so far.
  std::uint64_t done() const;

 private:
  struct Timed {
    Clock::time_point due;
    std::uint64_t order;  // FIFO among equal due times
    Task task;
    bool operator>(const Timed& o) const { return due != o.due ? due > o.due : order > o.order; }
  };
  void run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> ready_;
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> timed_;
  std::uint64_t next_order_ = 0, done_ = 0;
  bool running_ = false, stopping_ = false;
  std::thread thread_;
};

}  // namespace zipper::forwarder
