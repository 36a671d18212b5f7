// Per-frame memory and credit accounting: what a frame costs on arrival and
// what its release gives back (buffer, the job's share, the sender's credit).
#include "recv_sink.h"

#include "../proto/payload_pipe.h"
#include "forwarder.h"
#include "forwarder_internal.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

namespace {
bool is_data_frame(FrameType t) {
  return t == FrameType::kEager || t == FrameType::kRts || t == FrameType::kCts ||
         t == FrameType::kChunk;
}
}  // namespace

std::shared_ptr<Connection> destination_of(Connection& c, std::uint32_t vrank) {
  if (vrank == c.last_dest_rank)
    if (auto d = c.last_dest.lock(); d && !d->closed.load(std::memory_order_relaxed)) return d;
  auto d = c.job->lookup(vrank);
  c.last_dest = d;
  c.last_dest_rank = vrank;
  return d;
}

std::optional<Payload> Forwarder::RecvSinkImpl::payload_dest(const FrameHeader& hdr) {
  if (fatal_) return std::nullopt;
  if (!conn_->budget.charge(round_, hdr.payload_len)) {
    budget_spent_ = true;  // the frame stays unread until a later round
    return std::nullopt;
  }
  if (!conn_->job)
    return Payload::allocate(hdr.payload_len);  // hello: bounded by kPreHelloMaxPayload
  Job& job = *conn_->job;
  // A client past its grant is at fault whatever the memory: checked first.
  if (conn_->credit.in_use() + proto::credit_cost(hdr.payload_len) > conn_->credit.granted()) {
    ++conn_->errors;
    f_.send_error(
        conn_, ErrorCode::kCreditOverrun, conn_->vrank, hdr.seq,
        "client exceeded its credit of " + std::to_string(conn_->credit.granted()) + " frames");
    fatal_ = violation_ = true;
    return std::nullopt;
  }
  // Read before the checks: a release after them moves it and wakes us.
  conn_->park_epoch = job.releases.load(std::memory_order_acquire);
  conn_->share_wait = 0;
  const std::uint64_t bytes = hdr.payload_len;
  // A destination holds at most its credit's worth of frames inside zipperd:
  // its senders pause until it reads (only its own job's releases wake them).
  auto dest = is_data_frame(hdr.type) ? destination_of(*conn_, hdr.dst) : nullptr;
  if (dest && dest->inbound.load(std::memory_order_relaxed) >= f_.cfg_.conn_credits) {
    conn_->share_wait = bytes + 1;
    f_.warn_limited("destination", "job {}: {} does not read ({} frames wait for it); pausing {}",
                    job.label(), dest->name(), dest->inbound.load(), conn_->name());
    return std::nullopt;
  }
  // The job's fair share first: a job over it parks (only its own frames
  // leaving zipperd let it go on), however many buffers are free.
  auto& held = job.memory_held;
  if (bytes > 0 && !f_.share_.try_acquire(held, bytes)) {
    conn_->share_wait = bytes;
    f_.warn_limited("share", "job {} holds its fair share of memory ({} bytes); pausing {}",
                    job.label(), f_.share_.share(), conn_->name());
    return std::nullopt;
  }
  std::optional<BufferPool::Buffer> buf;
  if (bytes > 0) {
    bool at_share = false;
    buf = f_.pool_->acquire(hdr.payload_len, &job.pool_use, f_.share_.jobs(), &at_share);
    if (!buf) {  // park until a buffer frees up (its own job's, when at its class share)
      f_.share_.release(held, bytes);
      if (at_share) {
        conn_->share_wait = bytes;
        f_.warn_limited("class-share",
                        "job {} holds its share of every pool class a {}-byte frame fits; "
                        "pausing {}",
                        job.label(), bytes, conn_->name());
      }
      return std::nullopt;
    }
  }
  const std::uint64_t cost = proto::credit_cost(hdr.payload_len);
  if (!conn_->credit.charge(cost)) {
    ++conn_->errors;
    conn_->credit.release(cost);
    f_.share_.release(held, bytes);
    if (buf) f_.pool_->release(*buf, &job.pool_use);
    f_.send_error(
        conn_, ErrorCode::kCreditOverrun, conn_->vrank, hdr.seq,
        "client exceeded its credit of " + std::to_string(conn_->credit.granted()) + " frames");
    fatal_ = violation_ = true;
    return std::nullopt;
  }
  // The client can no longer send a largest frame: it stalls until credit returns.
  const bool exhausted =
      conn_->credit.granted() - conn_->credit.in_use() < proto::credit_cost(f_.cfg_.max_frame);
  if (exhausted && !conn_->credit_exhausted) {
    conn_->credit_stalls.fetch_add(1, std::memory_order_relaxed);
    f_.credit_stalls_.fetch_add(1, std::memory_order_relaxed);
  }
  conn_->credit_exhausted = exhausted;
  // The owner returns the buffer, the job's share and the credit when the
  // last reference (the destination's send queue, normally) drops the
  // payload. It must not keep the sender alive: two connections that die
  // with frames queued for each other would otherwise hold each other (and
  // every buffer queued on them) forever, leaking pool buffers, peers'
  // credit and sockets.
  if (dest) dest->inbound.fetch_add(1, std::memory_order_relaxed);
  auto owner = std::shared_ptr<void>(
      buf ? static_cast<void*>(buf->data) : nullptr,
      [&f = f_, w = std::weak_ptr<Connection>(conn_), wd = std::weak_ptr<Connection>(dest),
       job = conn_->job, buf, bytes, cost](void*) {
        f.share_.release(job->memory_held, bytes);
        if (buf) f.release_buffer(*buf, &job->pool_use);
        if (auto d = wd.lock()) d->inbound.fetch_sub(1, std::memory_order_relaxed);
        job->releases.fetch_add(1, std::memory_order_acq_rel);
        if (job->share_parked.load(std::memory_order_relaxed) > 0) f.wake_all_receivers();
        if (auto c = w.lock()) f.return_credit(c, cost);
      });
  if (hdr.payload_len > 0) {
    conn_->mid_frame = true;
    conn_->frame_started = std::chrono::steady_clock::now();
  }
  Payload out{std::span<std::byte>(buf ? buf->data : nullptr, hdr.payload_len), std::move(owner)};
  // The buffer still accounts for the bytes (pools, credit, the job's
  // share) when they travel in a pipe instead.
  if (f_.cfg_.splice && bytes >= PipePool::kMinPayload && conn_->link->splices() &&
      (hdr.type == FrameType::kChunk || hdr.type == FrameType::kEager)) {
    if (dest && dest->link->splices()) out.pipe = f_.pipes_->acquire(bytes);
  }
  return out;
}

void Forwarder::release_buffer(const BufferPool::Buffer& b, PoolTenant* tenant) {
  pool_->release(b, tenant);
  if (parked_.load(std::memory_order_relaxed) > 0) wake_all_receivers();
}

void Forwarder::return_credit(const std::shared_ptr<Connection>& conn, std::uint64_t cost) {
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

}  // namespace zipper::forwarder
