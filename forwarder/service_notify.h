// systemd's service notification protocol (sd_notify(3), via libsystemd).
// Every call is a no-op returning false when zipperd does not run under a
// Type=notify unit (NOTIFY_SOCKET unset).
#pragma once

#include <chrono>
#include <string>

namespace zipper::forwarder::notify {

/// READY=1 with a STATUS= line: every listener is bound.
bool ready(const std::string& status);
/// STATUS=: one human line for `systemctl status`.
bool status(const std::string& status);
/// RELOADING=1 (SIGHUP taken); follow with ready() when done.
bool reloading();
/// STOPPING=1: shutdown has begun.
bool stopping();
/// WATCHDOG=1: the service is alive.
bool watchdog();
/// The unit's WatchdogSec= as systemd passed it (WATCHDOG_USEC), or zero
/// when no watchdog is armed for this process.
std::chrono::microseconds watchdog_interval();

}  // namespace zipper::forwarder::notify
