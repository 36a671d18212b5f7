// One connection's receive sink (recv_sink.h).
#include "recv_sink.h"

#include <algorithm>

#include "job_registry.h"

namespace zipper::forwarder {

namespace {
// A connection whose tenant is flooding waits at least this long before it
// is read again: its own share may be whole while the tenant's is spent.
constexpr auto kTenantRetry = std::chrono::milliseconds(10);
}  // namespace

std::optional<proto::Payload> ConnectionSink::payload_dest(const proto::FrameHeader& hdr) {
  if (fatal_) return std::nullopt;
  if (!conn_->budget.charge(round_, hdr.payload_len)) {
    budget_spent_ = true;  // the frame stays unread until a later round
    return std::nullopt;
  }
  if (!conn_->job)
    return proto::Payload::allocate(hdr.payload_len);  // hello: bounded by kPreHelloMaxPayload
  if (hdr.type == proto::FrameType::kPing && hdr.payload_len == 0) return take_ping(hdr);
  // An ABORT ends the job: it costs no credit (the rank sends it whatever
  // it has left) and holds nothing; the control budget bounds how many.
  if (hdr.type == proto::FrameType::kAbort && hdr.payload_len == 0) return proto::Payload{};
  auto out = flow_.reserve(conn_, hdr, &violation_);
  if (violation_) fatal_ = true;
  return out;
}

std::optional<proto::Payload> ConnectionSink::take_ping(const proto::FrameHeader& hdr) {
  // After a PING over the share, nothing more of this connection is read in
  // this call: it waits in the side's timed backlog for its next token.
  if (ping_paused_) return std::nullopt;
  // The client charged itself a frame of credit for the PING; it goes back
  // at once (no buffer, no owner: a PING holds nothing inside zipperd).
  if (!conn_->credit.charge(1)) {
    conn_->credit.release(1);
    ++conn_->errors;
    fatal_ = violation_ = true;  // the caller closes it as a protocol violation
    return std::nullopt;
  }
  flow_.return_credit(conn_, 1);
  const auto now = std::chrono::steady_clock::now();
  if (!conn_->ping_share.take(now)) {
    drop_frame_ = ping_paused_ = true;
    conn_->ping_resume = conn_->ping_share.next_token();
    ++pings_over_share_;
    return proto::Payload{};
  }
  if (!tenant_pings_) return proto::Payload{};
  // Then its tenant's share: over it, the answer waits for the tenant's
  // next token and the connection is not read till then (or, with the
  // token too far off, the PING is dropped and the connection waits for
  // its own next token).
  const auto due = tenant_pings_->reserve(conn_->job->tenant(), now);
  if (!due) {
    drop_frame_ = ping_paused_ = true;
    conn_->ping_resume = std::max(conn_->ping_share.next_token(), now + kTenantRetry);
    ++pings_over_tenant_share_;
  } else if (*due > now) {
    defer_frame_ = ping_paused_ = true;
    conn_->ping_resume = *due;
    ++pings_deferred_;
  }
  return proto::Payload{};
}

}  // namespace zipper::forwarder
