// The systemd watchdog and status thread. Every half watchdog interval it
// reads one round counter per receive and send loop (Forwarder::loop_rounds)
// and sends WATCHDOG=1 only if every counter moved since the last ping: a
// loop stuck in a call stops the pings, and systemd restarts zipperd
// (Restart=on-failure). It also refreshes STATUS= every status period.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zipper::forwarder {

class Watchdog {
 public:
  using Rounds = std::function<std::vector<std::uint64_t>()>;
  using Status = std::function<std::string()>;

  /// `interval`: the unit's WatchdogSec (zero: no pings, status only). The
  /// loops advance at least every 500 ms, so interval should be 2 s or more.
  Watchdog(Rounds rounds, Status status, std::chrono::microseconds interval,
           std::chrono::milliseconds status_period = std::chrono::seconds(5));
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Pings sent so far, and checks where some loop had not moved.
  std::uint64_t pings() const;
  std::uint64_t missed() const;

 private:
  void run();

  Rounds rounds_;
  Status status_;
  const std::chrono::microseconds interval_;
  const std::chrono::milliseconds status_period_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::uint64_t pings_ = 0, missed_ = 0;
  std::thread thread_;
};

}  // namespace zipper::forwarder
