// Receives one connection's frames for zipperd (proto::RecvSink): charges the
// control budget (control_budget.h), then, once the connection is admitted,
// credit and memory (FlowControl) before a frame's payload is read, and hands
// each complete frame to the host (admission or relay). One sink serves one
// call of Link::progress_recv on the connection's receive thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "../proto/link.h"
#include "connection.h"
#include "connection_host.h"
#include "flow_control.h"

namespace zipper::forwarder {

class ConnectionSink final : public proto::RecvSink {
 public:
  /// `round`: the receive round of the connection's side (ControlBudget).
  ConnectionSink(ConnectionHost& host, FlowControl& flow, std::shared_ptr<Connection> c,
                 std::uint64_t round)
      : host_(host), flow_(flow), conn_(std::move(c)), round_(round) {}

  /// Charges the control budget, credit, the job's share and a pool buffer;
  /// nullopt pauses the connection (no budget or memory) or, with fatal(),
  /// ends it (credit overrun).
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& hdr) override;

  void on_frame(const proto::FrameHeader& hdr, proto::Payload payload) override {
    if (fatal_) return;
    conn_->mid_frame = false;
    if (std::exchange(drop_frame_, false)) return;  // a PING over its share
    host_.on_frame(conn_, hdr, std::move(payload));
    if (conn_->closed) fatal_ = true;
  }

  /// The connection is done: a protocol violation, or a handler closed it
  /// (e.g. an admission refusal).
  bool fatal() const { return fatal_; }
  /// The client broke the protocol (credit overrun): a protocol error.
  bool violation() const { return violation_; }
  /// Paused because the connection spent this round's control budget.
  bool budget_spent() const { return budget_spent_; }
  /// Paused because a PING went over the connection's share (ping_share.h):
  /// read it again at Connection::ping_resume.
  bool ping_paused() const { return ping_paused_; }
  /// PINGs this call dropped over the connection's share (the caller counts them).
  std::uint64_t pings_over_share() const { return pings_over_share_; }

 private:
  ConnectionHost& host_;
  FlowControl& flow_;
  std::shared_ptr<Connection> conn_;
  std::uint64_t round_;
  bool fatal_ = false;
  bool violation_ = false;
  bool budget_spent_ = false;
  bool ping_paused_ = false;
  bool drop_frame_ = false;  // the frame payload_dest just accepted is dropped, not handled
  std::uint64_t pings_over_share_ = 0;

  /// A PING of an admitted connection: credit back at once, then its share
  /// (ping_share.h). An empty payload to answer it, or to drop it when over
  /// the share (and pause the connection); nullopt once paused.
  std::optional<proto::Payload> take_ping(const proto::FrameHeader& hdr);
};

}  // namespace zipper::forwarder
