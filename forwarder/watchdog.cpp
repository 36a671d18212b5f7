#include "watchdog.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "service_notify.h"

namespace zipper::forwarder {

Watchdog::Watchdog(Rounds rounds, Status status, std::chrono::microseconds interval,
                   std::chrono::milliseconds status_period)
    : rounds_(std::move(rounds)),
      status_(std::move(status)),
      interval_(interval),
      status_period_(status_period) {
  if (interval_.count() > 0 && interval_ < std::chrono::seconds(2))
    spdlog::warn(
        "WatchdogSec below 2 s: the relay loops wake only every 500 ms when idle, so "
        "pings may be missed");
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::uint64_t Watchdog::pings() const {
  std::lock_guard lk(mu_);
  return pings_;
}

std::uint64_t Watchdog::missed() const {
  std::lock_guard lk(mu_);
  return missed_;
}

void Watchdog::run() {
  using namespace std::chrono;
  const auto ping_every =
      interval_.count() > 0 ? duration_cast<milliseconds>(interval_ / 2) : milliseconds::max();
  const auto tick = std::min(ping_every, status_period_);
  auto last = rounds_();
  auto next_status = steady_clock::now();
  auto next_ping =
      interval_.count() > 0 ? steady_clock::now() + ping_every : steady_clock::time_point::max();
  std::unique_lock lk(mu_);
  while (!stop_) {
    cv_.wait_for(lk, tick, [this] { return stop_; });
    if (stop_) break;
    const auto now = steady_clock::now();
    if (now >= next_status) {
      notify::status(status_());
      next_status = now + status_period_;
    }
    if (interval_.count() == 0 || now < next_ping) continue;
    next_ping = now + ping_every;
    const auto cur = rounds_();
    bool alive = cur.size() == last.size();
    for (std::size_t i = 0; alive && i < cur.size(); ++i) alive = cur[i] != last[i];
    last = cur;
    if (alive) {
      notify::watchdog();
      ++pings_;
    } else {
      ++missed_;
      spdlog::error("watchdog: a relay loop made no progress in {} ms; not pinging systemd",
                    ping_every.count());
    }
  }
}

}  // namespace zipper::forwarder
