// Dispatch and cut-through relay: a frame before admission goes to
// Admission; one from an admitted rank goes to its destination rank inside
// the same job only, found by that rank's site (router.h), written out at
// once by the receiving thread.
#include <cstring>

#include "../proto/payload_pipe.h"
#include "control_frames.h"
#include "forwarder.h"
#include "router.h"
#include "side.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
using proto::LinkStatus;
using proto::OutFrame;
using proto::Payload;

void Forwarder::on_frame(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                         Payload payload) {
  if (!conn->job) {
    if (hdr.type == FrameType::kHello) return admission_->on_hello(conn, hdr, payload);
    if (hdr.type == FrameType::kAuth) return admission_->on_auth(conn, payload);
    // HELLO then BYE: a launcher's probe (zipper-run) that saw the CHALLENGE
    // and leaves; not a protocol error, logged at debug only.
    if (hdr.type == FrameType::kBye && conn->hello_seen) {
      conn->said_bye = true;
      return close_conn(conn, "BYE after HELLO (a probe)");
    }
    send_error(conn, ErrorCode::kUnknownJob, 0, hdr.seq,
               "a connection must be admitted (HELLO, AUTH) before anything else");
    note_protocol_error(conn);
    return close_conn(conn,
                      std::string("first frame was ") + std::string(proto::to_string(hdr.type)));
  }
  switch (hdr.type) {
    case FrameType::kEager:
    case FrameType::kRts:
    case FrameType::kCts:
    case FrameType::kChunk:
      break;
    case FrameType::kBye:
      conn->said_bye = true;
      return;
    case FrameType::kPing:
      return answer_ping(conn, hdr);
    case FrameType::kAbort:
      return relay_abort(conn, hdr);
    default:
      note_protocol_error(conn);
      send_error(conn, ErrorCode::kMalformed, conn->vrank, hdr.seq,
                 std::string("unexpected ") + std::string(proto::to_string(hdr.type)) +
                     " frame from a client");
      return close_conn(conn, "unexpected frame type");
  }
  if (hdr.job_id != conn->job->id() || hdr.src != conn->vrank) {
    note_protocol_error(conn);
    send_error(conn, ErrorCode::kUnknownJob, conn->vrank, hdr.seq,
               "frame claims job " + std::to_string(hdr.job_id) + " rank " +
                   std::to_string(hdr.src) + " on a connection of job " +
                   std::to_string(conn->job->id()) + " rank " + std::to_string(conn->vrank));
    return close_conn(conn, "spoofed job or rank");
  }
  relay(conn, hdr, std::move(payload));
}

void Forwarder::relay(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                      Payload payload) {
  auto dest = route(*conn, hdr.dst);
  if (!dest || dest->closed) {
    send_error(conn, ErrorCode::kPeerGone, hdr.dst, hdr.seq,
               conn->job->site_of(hdr.dst) < 0
                   ? "rank " + std::to_string(hdr.dst) + " is outside the job's " +
                         std::to_string(conn->job->size()) + " ranks"
                   : "rank " + std::to_string(hdr.dst) + " is not connected");
    return;  // payload dropped here: its credit goes back to the sender
  }
  ++counters_.frames_relayed;
  counters_.bytes_relayed += hdr.payload_len;
  conn->received.add(hdr.payload_len);
  sides_[conn->side]->received.add(hdr.payload_len);
  dest->sent.add(hdr.payload_len);
  sides_[dest->side]->sent.add(hdr.payload_len);
  conn->job->count(hdr.src, hdr.payload_len);
  if (const int to = conn->job->site_of(hdr.dst); to >= 0 && to < kMaxRouteSites)
    counters_.to_site[to].add(hdr.payload_len);
  // A CTS lets the opposite direction's rendezvous go on: it must not wait
  // behind the data queued for this client (it is matched by sequence
  // number, not by order, so overtaking is safe).
  if (payload.pipe && !dest->link->splices() && !proto::materialize(payload)) {
    // Never happens short of a kernel failure; the frame is lost, so the
    // sender's connection goes rather than carry on with a gap.
    return close_conn(conn, std::string("cannot read a spliced payload: ") + std::strerror(errno));
  }
  OutFrame out{hdr, std::move(payload), {}};
  out.urgent = hdr.type == FrameType::kCts;
  dest->link->post(std::move(out));
  // Cut-through: write now from this thread; the destination side's send
  // thread finishes whatever the socket does not take.
  if (dest->link->progress_send() == LinkStatus::kError) dest->link->shutdown();
}

void Forwarder::relay_abort(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr) {
  // Only a rank of the job may end it: the connection was admitted with the
  // job's secret, and the frame must name that job and rank. Another
  // tenant's connection naming this job (or a rank it is not) is refused.
  if (hdr.job_id != conn->job->id() || hdr.src != conn->vrank) {
    counters_.aborts_refused.fetch_add(1, std::memory_order_relaxed);
    note_protocol_error(conn);
    send_error(conn, ErrorCode::kUnknownJob, conn->vrank, hdr.seq,
               "ABORT claims job " + std::to_string(hdr.job_id) + " rank " +
                   std::to_string(hdr.src) + " on a connection of job " +
                   std::to_string(conn->job->id()) + " rank " + std::to_string(conn->vrank));
    return close_conn(conn, "spoofed ABORT");
  }
  Job& job = *conn->job;
  // Once per job: every rank of a cluster may call MPI_Abort, each on every
  // rail; the first one's code is the job's.
  if (!job.abort_once()) return;
  counters_.jobs_aborted.fetch_add(1, std::memory_order_relaxed);
  const int site = job.site_of(conn->vrank);
  log_.warn("abort",
            "job {}: rank {} of site {} aborted the job with code {}; telling the other "
            "sites",
            job.label(), conn->vrank, site, hdr.tag);
  // The aborting rank's own site ends by its native MPI_Abort; every other
  // site hears it from here, at once (no wait for the departures).
  for (auto& other : job.members()) {
    if (other->doomed || job.site_of(other->vrank) == site) continue;
    OutFrame f;
    f.hdr.type = FrameType::kAbort;
    f.hdr.job_id = job.id();
    f.hdr.src = conn->vrank;
    f.hdr.dst = other->vrank;
    f.hdr.tag = hdr.tag;
    f.urgent = true;
    send_control(other, std::move(f));
  }
}

void Forwarder::answer_ping(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr) {
  // A client's health probe (client/rails.h): answered from this thread,
  // so a hung relay loop shows as a missing answer.
  if (conn->pong_queued.exchange(true)) {
    // Counted only: the sweep reports the count (a flood must not cost a
    // log decision per frame).
    counters_.pings_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  OutFrame pong;
  pong.hdr.type = FrameType::kPing;
  pong.hdr.flags = proto::kPong;
  pong.hdr.job_id = conn->job->id();
  pong.hdr.dst = conn->vrank;
  pong.hdr.seq = hdr.seq;
  pong.urgent = true;
  pong.on_sent = [w = std::weak_ptr<Connection>(conn)] {
    if (auto c = w.lock()) c->pong_queued.store(false);
  };
  return send_control(conn, std::move(pong));
}

}  // namespace zipper::forwarder
