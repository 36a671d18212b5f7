// Flow control: per-frame credit and memory accounting, parking and credit
// return (flow_control.h).
#include "flow_control.h"

#include <string>

#include "../proto/payload_pipe.h"
#include "control_frames.h"
#include "job_registry.h"
#include "router.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

FlowControl::FlowControl(const Config& cfg, Counters& counters, RateLimitedLog& log,
                         ConnectionHost& host)
    : conn_credits_(cfg.conn_credits),
      max_frame_(cfg.max_frame),
      splice_(cfg.splice),
      counters_(counters),
      log_(log),
      host_(host),
      pool_(std::make_unique<BufferPool>(cfg.pools)),
      // 1 MiB pipes take payloads up to 256 KiB (PayloadPipe::max_payload),
      // the chunks libmmpi sends; 64 of them stay within an unprivileged
      // user's default pipe limit (fs.pipe-user-pages-soft, 64 MiB).
      pipes_(std::make_unique<PipePool>(cfg.splice ? 64 : 0, std::size_t{1} << 20)),
      share_(cfg.max_memory, 2 * std::uint64_t{cfg.max_frame}) {}

void FlowControl::refuse_overrun(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr) {
  ++conn->errors;
  send_error(conn, ErrorCode::kCreditOverrun, conn->vrank, hdr.seq,
             "client exceeded its credit of " + std::to_string(conn->credit.granted()) + " frames");
}

std::optional<Payload> FlowControl::reserve(const std::shared_ptr<Connection>& conn,
                                            const FrameHeader& hdr, bool* violation) {
  Job& job = *conn->job;
  // A client past its grant is at fault whatever the memory: checked first.
  if (conn->credit.in_use() + proto::credit_cost(hdr.payload_len) > conn->credit.granted()) {
    refuse_overrun(conn, hdr);
    *violation = true;
    return std::nullopt;
  }
  // Read before the checks: a release after them moves it and wakes us.
  conn->park_epoch = job.releases.load(std::memory_order_acquire);
  conn->share_wait = 0;
  const std::uint64_t bytes = hdr.payload_len;
  // A destination holds at most its credit's worth of frames inside zipperd:
  // its senders pause until it reads (only its own job's releases wake them).
  auto dest = is_data_frame(hdr.type) ? route(*conn, hdr.dst) : nullptr;
  if (dest && dest->inbound.load(std::memory_order_relaxed) >= conn_credits_) {
    conn->share_wait = bytes + 1;
    log_.warn("destination", "job {}: {} does not read ({} frames wait for it); pausing {}",
              job.label(), dest->name(), dest->inbound.load(), conn->name());
    return std::nullopt;
  }
  // The job's fair share first: a job over it parks (only its own frames
  // leaving zipperd let it go on), however many buffers are free.
  auto& held = job.memory_held;
  if (bytes > 0 && !share_.try_acquire(held, bytes)) {
    conn->share_wait = bytes;
    log_.warn("share", "job {} holds its fair share of memory ({} bytes); pausing {}", job.label(),
              share_.share(), conn->name());
    return std::nullopt;
  }
  std::optional<BufferPool::Buffer> buf;
  if (bytes > 0) {
    bool at_share = false;
    buf = pool_->acquire(hdr.payload_len, &job.pool_use, share_.jobs(), &at_share);
    if (!buf) {  // park until a buffer frees up (its own job's, when at its class share)
      share_.release(held, bytes);
      if (at_share) {
        conn->share_wait = bytes;
        log_.warn("class-share",
                  "job {} holds its share of every pool class a {}-byte frame fits; pausing {}",
                  job.label(), bytes, conn->name());
      }
      return std::nullopt;
    }
  }
  const std::uint64_t cost = proto::credit_cost(hdr.payload_len);
  if (!conn->credit.charge(cost)) {
    conn->credit.release(cost);
    share_.release(held, bytes);
    if (buf) pool_->release(*buf, &job.pool_use);
    refuse_overrun(conn, hdr);
    *violation = true;
    return std::nullopt;
  }
  // The client can no longer send a largest frame: it stalls until credit returns.
  const bool exhausted =
      conn->credit.granted() - conn->credit.in_use() < proto::credit_cost(max_frame_);
  if (exhausted && !conn->credit_exhausted) {
    conn->credit_stalls.fetch_add(1, std::memory_order_relaxed);
    counters_.credit_stalls.fetch_add(1, std::memory_order_relaxed);
  }
  conn->credit_exhausted = exhausted;
  // The owner returns the buffer, the job's share and the credit when the
  // last reference (the destination's send queue, normally) drops the
  // payload. It must not keep the sender alive: two connections that die
  // with frames queued for each other would otherwise hold each other (and
  // every buffer queued on them) forever, leaking pool buffers, peers'
  // credit and sockets.
  if (dest) dest->inbound.fetch_add(1, std::memory_order_relaxed);
  auto owner = std::shared_ptr<void>(
      buf ? static_cast<void*>(buf->data) : nullptr,
      [this, w = std::weak_ptr<Connection>(conn), wd = std::weak_ptr<Connection>(dest),
       job = conn->job, buf, bytes, cost](void*) { release(w, wd, job, buf, bytes, cost); });
  if (hdr.payload_len > 0) {
    conn->mid_frame = true;
    conn->frame_started = std::chrono::steady_clock::now();
  }
  Payload out{std::span<std::byte>(buf ? buf->data : nullptr, hdr.payload_len), std::move(owner)};
  // The buffer still accounts for the bytes (pools, credit, the job's
  // share) when they travel in a pipe instead.
  if (splice_ && bytes >= PipePool::kMinPayload && conn->link->splices() &&
      (hdr.type == FrameType::kChunk || hdr.type == FrameType::kEager)) {
    if (dest && dest->link->splices()) out.pipe = pipes_->acquire(bytes);
  }
  return out;
}

void FlowControl::release(const std::weak_ptr<Connection>& sender,
                          const std::weak_ptr<Connection>& dest, const std::shared_ptr<Job>& job,
                          const std::optional<BufferPool::Buffer>& buf, std::uint64_t bytes,
                          std::uint64_t cost) {
  share_.release(job->memory_held, bytes);
  if (buf) {
    pool_->release(*buf, &job->pool_use);
    if (memory_parked_.load(std::memory_order_relaxed) > 0) host_.wake_receivers();
  }
  if (auto d = dest.lock()) d->inbound.fetch_sub(1, std::memory_order_relaxed);
  job->releases.fetch_add(1, std::memory_order_acq_rel);
  if (job->share_parked.load(std::memory_order_relaxed) > 0) host_.wake_receivers();
  if (auto c = sender.lock()) return_credit(c, cost);
}

void FlowControl::return_credit(const std::shared_ptr<Connection>& conn, std::uint64_t cost) {
  conn->credit.release(cost);
  if (conn->closed) return;
  // Return credit in batches of a quarter of the grant; smaller amounts ride
  // on the next frame to this client. The grant is at least twice the largest
  // frame (checked at start), so a client that is blocked on credit always has
  // more than a quarter of the grant outstanding and gets it back.
  if (conn->credit.returnable() < conn->credit.granted() / 4) return;
  if (conn->credit_frame_queued.exchange(true)) return;
  OutFrame f;
  f.hdr.type = FrameType::kCredit;
  f.hdr.job_id = conn->job ? conn->job->id() : 0;
  f.hdr.dst = conn->vrank;
  f.urgent = true;  // the client may be blocked on it (full duplex)
  send_control(conn, std::move(f));
}

// Parked connections are counted by what they wait for: the global budget
// (any release wakes the receivers) or their job's share (Job::share_parked:
// only that job's releases do), so that a job parked at its share does not
// cost a wake-up per frame of every other job.
void FlowControl::park(Connection& c, bool paused) {
  const ParkReason reason = !paused            ? ParkReason::kNone
                            : c.share_wait > 0 ? ParkReason::kJobShare
                                               : ParkReason::kPoolMemory;
  if (reason == c.park) return;
  if (c.park == ParkReason::kPoolMemory) --memory_parked_;
  if (c.park == ParkReason::kJobShare) --c.job->share_parked;
  if (reason == ParkReason::kPoolMemory) ++memory_parked_;
  if (reason == ParkReason::kJobShare) ++c.job->share_parked;
  c.park = reason;
}

bool FlowControl::may_retry(const Connection& c) {
  // A connection parked at its job's share (or behind a full destination of
  // its job) stays parked until one of the job's frames leaves; waking it
  // for every other job's release would cost a pass over all its
  // connections per frame.
  if (c.park == ParkReason::kNone) return false;
  return !(c.park == ParkReason::kJobShare &&
           c.job->releases.load(std::memory_order_acquire) == c.park_epoch);
}

void FlowControl::note_memory_stall(Connection& c) {
  c.memory_stalls.fetch_add(1, std::memory_order_relaxed);
  counters_.memory_stalls.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace zipper::forwarder
