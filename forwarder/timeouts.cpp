// Timeout sweeps: hello/auth, a frame's payload, and a job's readiness,
// checked every 250 ms on each receive thread.
#include "forwarder.h"
#include "forwarder_internal.h"

namespace zipper::forwarder {

using proto::ErrorCode;

void Forwarder::sweep(Side& side) {
  using std::chrono::milliseconds;
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<std::shared_ptr<Connection>, const char*>> expired;
  std::vector<std::shared_ptr<Connection>> parked;
  {
    std::lock_guard lk(side.mu);
    for (auto& [cid, c] : side.conns) {
      if (c->parked) parked.push_back(c);  // shares change as jobs come and go
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
    ++timeouts_;
    send_error(c, c->job ? ErrorCode::kBadHello : ErrorCode::kUnknownJob, c->vrank, 0, why);
    close_conn(c, why);
  }
}

}  // namespace zipper::forwarder
