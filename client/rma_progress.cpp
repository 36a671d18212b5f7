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
  while (!stop_.load()) {
    engine_.poll_fds(&fds);
    if (wake_fd_ >= 0) fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    const bool burst = Clock::now() - last_work < kBurst;
    ppoll(fds.data(), fds.size(), burst ? &quick : &idle, nullptr);
    if (stop_.load()) break;
    {
      // Blocks while the application is inside an MMPI call (it progresses
      // then), so this never spins on a descriptor the application will read.
      std::lock_guard<std::recursive_mutex> g(engine_.mutex());
      engine_.progress();
    }
    rounds_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t now_served = served.load(std::memory_order_relaxed);
    if (now_served != seen) {
      seen = now_served;
      last_work = Clock::now();
    }
  }
}

}  // namespace zipper::client::rma
