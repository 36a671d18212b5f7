// Each tenant's share of PING answers (tenant_share.h says who a tenant is):
// one generic cell rate algorithm (GCRA, as ping_share.h) per tenant, over
// all its jobs and connections on every side.
//
// Why: the per-connection share (--ping-rate) bounds one rank, but a tenant
// with many admitted ranks had as many shares: a job of thousands of ranks
// flooding at its per-connection rate still took a receive thread's time
// from every other tenant's jobs. A tenant's answers are now bounded too.
//
// A PING over the tenant's share is not dropped at once: its answer is put
// off to the tenant's next free token (reserve() returns when), and its
// connection is not read meanwhile, so a burst of legitimate PINGs (a large
// idle job whose ranks all probe their rails) is answered late rather than
// not at all. Only when that token is more than `max_wait` away (the
// tenant floods) is the PING dropped, nothing charged, like one over the
// connection's share.
//
// Thread-safe (both sides' receive threads): one mutex, taken once per PING
// that passed its connection's share.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace zipper::forwarder {

class TenantPingShares {
 public:
  using Clock = std::chrono::steady_clock;

  /// `per_second`: PINGs answered per second per tenant in the long run (0:
  /// no share). `burst`: answered back to back after a quiet spell (>= 1).
  /// `max_wait`: the longest an answer is put off before the PING is
  /// dropped instead.
  TenantPingShares(std::uint32_t per_second, std::uint32_t burst, Clock::duration max_wait)
      : interval_(per_second ? std::chrono::nanoseconds(1'000'000'000 / per_second)
                             : Clock::duration::zero()),
        tolerance_(interval_ * ((burst ? burst : 1) - 1)),
        max_wait_(max_wait) {}

  /// When a PING of `tenant` seen at `now` is answered: `now` (at once), a
  /// later time (put off; its token is taken), or nullopt (over the share
  /// by more than max_wait: drop it; nothing is charged).
  std::optional<Clock::time_point> reserve(const std::string& tenant, Clock::time_point now) {
    if (interval_ == Clock::duration::zero()) return now;
    std::lock_guard lk(mu_);
    Clock::time_point& tat = tat_[tenant];
    const Clock::time_point t = tat < now ? now : tat;
    Clock::time_point due = t - tolerance_;
    if (due < now) due = now;
    if (due - now > max_wait_) return std::nullopt;
    tat = t + interval_;
    return due;
  }

  /// Forgets the tenants whose share is whole again (their next PING would
  /// be answered at once with a full burst): the table holds only tenants
  /// that PINGed within the last burst's time. O(tenants); call now and then.
  void prune(Clock::time_point now) {
    std::lock_guard lk(mu_);
    std::erase_if(tat_, [&](const auto& kv) { return kv.second <= now; });
  }

  /// Tenants in the table now.
  std::size_t tenants() const {
    std::lock_guard lk(mu_);
    return tat_.size();
  }

 private:
  const Clock::duration interval_;
  const Clock::duration tolerance_;  // (burst - 1) intervals a quiet tenant saves
  const Clock::duration max_wait_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> tat_;  // theoretical arrival times
};

}  // namespace zipper::forwarder
