// The reaper thread (reaper.h).
#include "reaper.h"

namespace zipper::forwarder {

void Reaper::start(std::function<void()> on_start) {
  std::lock_guard lk(mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  thread_ = std::thread([this, f = std::move(on_start)] {
    if (f) f();
    run();
  });
}

void Reaper::stop() {
  {
    std::lock_guard lk(mu_);
    if (!running_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::unique_lock lk(mu_);
  running_ = false;
  // Posted between the thread's last look and now: run here.
  while (!ready_.empty()) {
    Task t = std::move(ready_.front());
    ready_.pop_front();
    lk.unlock();
    t();
    lk.lock();
  }
}

void Reaper::post(Task task) {
  {
    std::unique_lock lk(mu_);
    if (!running_) {
      lk.unlock();
      task();  // not started, or stopped: nobody else will run it
      return;
    }
    ready_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void Reaper::post_after(Clock::duration delay, Task task) {
  {
    std::unique_lock lk(mu_);
    if (!running_) {
      lk.unlock();
      task();
      return;
    }
    timed_.push(Timed{Clock::now() + delay, next_order_++, std::move(task)});
  }
  cv_.notify_one();
}

std::uint64_t Reaper::backlog() const {
  std::lock_guard lk(mu_);
  return ready_.size() + timed_.size();
}

std::uint64_t Reaper::done() const {
  std::lock_guard lk(mu_);
  return done_;
}

void Reaper::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    const auto now = Clock::now();
    // Due delayed tasks join the ready queue in their order.
    while (!timed_.empty() && (stopping_ || timed_.top().due <= now)) {
      ready_.push_back(std::move(const_cast<Timed&>(timed_.top()).task));
      timed_.pop();
    }
    if (!ready_.empty()) {
      Task t = std::move(ready_.front());
      ready_.pop_front();
      lk.unlock();
      t();
      t = nullptr;  // what it held (a connection: its socket) goes here, not under the lock
      lk.lock();
      ++done_;
      continue;
    }
    if (stopping_) return;
    if (timed_.empty())
      cv_.wait(lk);
    else
      cv_.wait_until(lk, timed_.top().due);
  }
}

}  // namespace zipper::forwarder
