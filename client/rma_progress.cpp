#include "rma_progress.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "engine.h"

namespace zipper::client::rma {

ProgressThread::ProgressThread(Engine& engine, std::chrono::microseconds interval)
    : engine_(engine),
      interval_ms_(std::max(1, static_cast<int>((interval.count() + 999) / 1000))),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this] { run(); });
}

ProgressThread::~ProgressThread() {
  stop_.store(true);
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ProgressThread::run() {
  on_progress_thread = true;
  std::vector<pollfd> fds;
  using Clock = std::chrono::steady_clock;
  constexpr auto kBurst = std::chrono::milliseconds(10);
  const timespec quick{0, 50 * 1000};
  const timespec idle{interval_ms_ / 1000, (interval_ms_ % 1000) * 1000 * 1000};
  Clock::time_point last_work{};
  std::uint64_t seen = served.load(std::memory_order_relaxed);
  // Never waits for the engine's lock: the application holds it only inside
  // an MMPI call, where it progresses by itself. Waiting for it made every
  // call of an RMA loop hand the lock to this thread and back (a futex wake
  // and a thread switch each way: about 40 us per flushed operation on the
  // shaped emulation, docs/performance.md); a short nap instead costs the
  // application nothing. Naps double from 50 us up to the interval while
  // the application stays inside MMPI (a long blocking call must not cost
  // 20 000 wake-ups a second), and start again at 50 us after a round.
  pollfd stop_only{wake_fd_, POLLIN, 0};
  const long idle_ns = static_cast<long>(interval_ms_) * 1000 * 1000;
  long nap_ns = quick.tv_nsec;
  auto nap = [&] {
    const timespec t{nap_ns / 1000000000L, nap_ns % 1000000000L};
    ppoll(&stop_only, wake_fd_ >= 0 ? 1 : 0, &t, nullptr);
    nap_ns = std::min(nap_ns * 2, idle_ns);
  };
  while (!stop_.load()) {
    if (!engine_.try_poll_fds(&fds)) {
      nap();
      continue;
    }
    if (wake_fd_ >= 0) fds.push_back(stop_only);
    const bool burst = Clock::now() - last_work < kBurst;
    ppoll(fds.data(), fds.size(), burst ? &quick : &idle, nullptr);
    if (stop_.load()) break;
    {
      std::unique_lock<std::recursive_mutex> g(engine_.mutex(), std::try_to_lock);
      if (!g.owns_lock()) {
        nap();
        continue;
      }
      engine_.progress();
    }
    nap_ns = quick.tv_nsec;
    rounds_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t now_served = served.load(std::memory_order_relaxed);
    if (now_served != seen) {
      seen = now_served;
      last_work = Clock::now();
    }
  }
}

}  // namespace zipper::client::rma
