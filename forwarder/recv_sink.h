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
#include "tenant_ping_share.h"

namespace zipper::forwarder {

class ConnectionSink final : public proto::RecvSink {
 public:
  /// `round`: the receive round of the connection's side (ControlBudget);
  /// `tenant_pings`: the tenants' PING shares (null: none).
  ConnectionSink(ConnectionHost& host, FlowControl& flow, std::shared_ptr<Connection> c,
                 std::uint64_t round, TenantPingShares* tenant_pings = nullptr)
      : host_(host), flow_(flow), conn_(std::move(c)), round_(round), tenant_pings_(tenant_pings) {}

  /// Charges the control budget, credit, the job's share and a pool buffer;
  /// nullopt pauses the connection (no budget or memory) or, with fatal(),
  /// ends it (credit overrun).
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& hdr) override;

  void on_frame(const proto::FrameHeader& hdr, proto::Payload payload) override {
    if (fatal_) return;
    conn_->mid_frame = false;
    if (std::exchange(drop_frame_, false)) return;  // a PING over its share
    if (std::exchange(defer_frame_, false)) {       // answered at Connection::ping_resume
      conn_->pong_deferred = true;
      conn_->deferred_ping_seq = hdr.seq;
      return;
    }
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
  /// PINGs this call put off (answer deferred) or dropped over the tenant's
  /// share (tenant_ping_share.h; the caller counts them).
  std::uint64_t pings_deferred() const { return pings_deferred_; }
  std::uint64_t pings_over_tenant_share() const { return pings_over_tenant_share_; }

 private:
  ConnectionHost& host_;
  FlowControl& flow_;
  std::shared_ptr<Connection> conn_;
  std::uint64_t round_;
  TenantPingShares* tenant_pings_;
  bool fatal_ = false;
  bool violation_ = false;
  bool budget_spent_ = false;
  bool ping_paused_ = false;
  bool drop_frame_ = false;   // the frame payload_dest just accepted is dropped, not handled
  bool defer_frame_ = false;  // ... is a PING answered later (its tenant's share)
  std::uint64_t pings_over_share_ = 0, pings_deferred_ = 0, pings_over_tenant_share_ = 0;

  /// A PING of an admitted connection: credit back at once, then its share
  /// (ping_share.h). An empty payload to answer it, or to drop it when over
  /// the share (and pause the connection); nullopt once paused.
  std::optional<proto::Payload> take_ping(const proto::FrameHeader& hdr);
};

}  // namespace zipper::forwarder
