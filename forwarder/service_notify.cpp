#include "service_notify.h"

#include <systemd/sd-daemon.h>

namespace zipper::forwarder::notify {

namespace {
bool send(const std::string& state) { return sd_notify(0, state.c_str()) > 0; }
}  // namespace

bool ready(const std::string& s) { return send("READY=1\nSTATUS=" + s); }
bool status(const std::string& s) { return send("STATUS=" + s); }
bool reloading() { return send("RELOADING=1"); }
bool stopping() { return send("STOPPING=1"); }
bool watchdog() { return send("WATCHDOG=1"); }

std::chrono::microseconds watchdog_interval() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0) return std::chrono::microseconds{0};
  return std::chrono::microseconds{usec};
}

}  // namespace zipper::forwarder::notify
