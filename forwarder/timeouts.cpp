// Timeout sweeps: hello/auth, a frame's payload, and a job's readiness,
// checked every 250 ms on each receive thread from deadline queues (only
// what is due is touched); and the count of log lines the
// limiters held back.
#include <algorithm>

#include "control_frames.h"
#include "forwarder.h"
#include "side.h"

namespace zipper::forwarder {

using proto::ErrorCode;

void Forwarder::report_control_drops(std::chrono::steady_clock::time_point now) {
  // One line per 10 s at most, with what was dropped and deferred since.
  if (now - control_report_at_ < std::chrono::seconds(10)) return;
  const std::uint64_t dropped = counters_.pings_dropped.load(),
                      deferred = counters_.control_deferrals.load();
  if (dropped != reported_dropped_ || deferred != reported_deferred_)
    spdlog::warn(
        "control frames: {} PINGs dropped (an answer was still queued) and {} receive rounds cut "
        "short by --control-budget in the last {} s",
        dropped - reported_dropped_, deferred - reported_deferred_,
        std::chrono::duration_cast<std::chrono::seconds>(now - control_report_at_).count());
  reported_dropped_ = dropped;
  reported_deferred_ = deferred;
  control_report_at_ = now;
}

void Forwarder::sweep(Side& side) {
  const auto now = std::chrono::steady_clock::now();
  if (side.index == 0) {
    log_.report_suppressed();
    report_control_drops(now);
    registry_.sample_activity(now);
    tenant_pings_.prune(now);
    std::lock_guard lk(unadmitted_mu_);
    while (!unadmitted_.empty()) {  // admitted or closed at the front: forget them
      auto c = unadmitted_.front().lock();
      if (c && !c->closed && !c->admitted.load(std::memory_order_acquire)) break;
      unadmitted_.pop_front();
    }
  }
  retry_parked(side, true);  // shares change as jobs come and go
  expire_due(side, now);
}

void Forwarder::expire_due(Side& side, std::chrono::steady_clock::time_point now) {
  using std::chrono::milliseconds;
  const auto hello_timeout = milliseconds(cfg_.hello_timeout_ms),
             ready_timeout = milliseconds(cfg_.ready_timeout_ms),
             frame_timeout = milliseconds(cfg_.frame_timeout_ms);
  std::vector<std::pair<std::shared_ptr<Connection>, const char*>> expired;
  // Only the fronts that are due: a sweep costs what expires (and what is
  // forgotten), not a pass over every connection.
  // Each connection is checked at the earlier of its two deadlines (front of
  // admit_due), and again at the later one (later_due) only when the
  // earlier check could not settle it.
  const auto first = std::min(hello_timeout, ready_timeout),
             second = std::max(hello_timeout, ready_timeout);
  const auto check = [&](const std::shared_ptr<Connection>& c, bool hello_due, bool ready_due) {
    if (!c->job) {
      if (hello_due) {
        expired.emplace_back(c, "no hello and authentication within the hello timeout");
        return true;
      }
    } else if (!c->job->ready()) {
      if (ready_due) {
        expired.emplace_back(c, "the job's other ranks did not connect within the ready timeout");
        return true;
      }
    } else {
      return true;  // admitted, its job complete: nothing left to check
    }
    return false;
  };
  while (!side.admit_due.empty()) {
    auto c = side.admit_due.front().lock();
    if (c && !c->closed && now - c->accepted <= first) break;
    side.admit_due.pop_front();
    if (!c || c->closed || c->doomed) continue;
    if (!check(c, hello_timeout == first, ready_timeout == first))
      side.later_due.push_back(c);  // accept order still: deadline order
  }
  while (!side.later_due.empty()) {
    auto c = side.later_due.front().lock();
    if (c && !c->closed && now - c->accepted <= second) break;
    side.later_due.pop_front();
    if (c && !c->closed && !c->doomed) check(c, true, true);
  }
  while (!side.frame_due.empty() && side.frame_due.top().first <= now) {
    auto c = side.frame_due.top().second.lock();
    side.frame_due.pop();
    if (!c || c->closed) continue;
    c->frame_due_queued = false;
    if (!c->mid_frame || c->doomed) continue;
    if (now - c->frame_started > frame_timeout) {
      expired.emplace_back(c, "a frame's payload did not arrive within the frame timeout");
    } else {  // a later frame: its own deadline
      c->frame_due_queued = true;
      side.frame_due.emplace(c->frame_started + frame_timeout, c);
    }
  }
  // Marked first: ranks of one job that time out together are not told
  // about each other (n^2 error frames).
  for (auto& [c, why] : expired) c->doomed = true;
  for (auto& [c, why] : expired) {
    ++counters_.timeouts;
    send_error(c, c->job ? ErrorCode::kBadHello : ErrorCode::kUnknownJob, c->vrank, 0, why);
    close_conn(c, why);
  }
}

}  // namespace zipper::forwarder
