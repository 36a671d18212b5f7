// One connection's receive sink (recv_sink.h).
#include "recv_sink.h"

namespace zipper::forwarder {

std::optional<proto::Payload> ConnectionSink::payload_dest(const proto::FrameHeader& hdr) {
  if (fatal_) return std::nullopt;
  if (!conn_->budget.charge(round_, hdr.payload_len)) {
    budget_spent_ = true;  // the frame stays unread until a later round
    return std::nullopt;
  }
  if (!conn_->job)
    return proto::Payload::allocate(hdr.payload_len);  // hello: bounded by kPreHelloMaxPayload
  auto out = flow_.reserve(conn_, hdr, &violation_);
  if (violation_) fatal_ = true;
  return out;
}

}  // namespace zipper::forwarder
