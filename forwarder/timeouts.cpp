// Timeout sweeps: hello/auth, a frame's payload, and a job's readiness,
// checked every 250 ms on each receive thread; and the count of log lines the
// limiters held back.
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
  using std::chrono::milliseconds;
  const auto now = std::chrono::steady_clock::now();
  if (side.index == 0) {
    log_.report_suppressed();
    report_control_drops(now);
    registry_.sample_activity(now);
    std::lock_guard lk(unadmitted_mu_);
    while (!unadmitted_.empty()) {  // admitted or closed at the front: forget them
      auto c = unadmitted_.front().lock();
      if (c && !c->closed && !c->admitted.load(std::memory_order_acquire)) break;
      unadmitted_.pop_front();
    }
  }
  std::vector<std::pair<std::shared_ptr<Connection>, const char*>> expired;
  std::vector<std::shared_ptr<Connection>> parked;
  {
    std::lock_guard lk(side.mu);
    for (auto& [cid, c] : side.conns) {
      if (c->park != ParkReason::kNone) parked.push_back(c);  // shares change as jobs come and go
      if (!c->job) {
        if (now - c->accepted > milliseconds(cfg_.hello_timeout_ms))
          expired.emplace_back(c, "no hello and authentication within the hello timeout");
      } else if (c->mid_frame && now - c->frame_started > milliseconds(cfg_.frame_timeout_ms)) {
        expired.emplace_back(c, "a frame's payload did not arrive within the frame timeout");
      } else if (now - c->accepted > milliseconds(cfg_.ready_timeout_ms) && !c->job->ready()) {
        expired.emplace_back(c, "the job's other ranks did not connect within the ready timeout");
      }
    }
  }
  for (auto& c : parked) progress_conn(side, c);
  // Marked first: ranks of one job that time out together are not told
  // about each other (n^2 error frames on this thread).
  for (auto& [c, why] : expired) c->doomed = true;
  for (auto& [c, why] : expired) {
    ++counters_.timeouts;
    send_error(c, c->job ? ErrorCode::kBadHello : ErrorCode::kUnknownJob, c->vrank, 0, why);
    close_conn(c, why);
  }
}

}  // namespace zipper::forwarder
