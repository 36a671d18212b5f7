// Receives one connection's frames for the forwarder: charges the frame's
// credit (counted in frames), the job's memory share and a pool buffer before
// its payload is read, then hands the frame to routing. Internal to zipperd's
// forwarder (forwarder/*.cpp).
#pragma once

#include <memory>
#include <optional>

#include "../proto/link.h"
#include "connection.h"
#include "forwarder.h"

namespace zipper::forwarder {

// Receives one connection's frames: charges credit and memory, then routes.
class Forwarder::RecvSinkImpl final : public proto::RecvSink {
 public:
  /// `round`: the receive round of the connection's side (ControlBudget).
  RecvSinkImpl(Forwarder& f, std::shared_ptr<Connection> c, std::uint64_t round)
      : f_(f), conn_(std::move(c)), round_(round) {}

  /// Charges credit, the job's share and a pool buffer; nullopt pauses the
  /// connection (no memory) or, with fatal(), ends it (credit overrun).
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& hdr) override;

  void on_frame(const proto::FrameHeader& hdr, proto::Payload payload) override {
    if (fatal_) return;
    conn_->mid_frame = false;
    f_.on_frame(conn_, hdr, std::move(payload));
    if (conn_->closed) fatal_ = true;
  }

  /// The connection is done: a protocol violation, or a handler closed it
  /// (e.g. an admission refusal).
  bool fatal() const { return fatal_; }
  /// The client broke the protocol (credit overrun): a protocol error.
  bool violation() const { return violation_; }
  /// Paused because the connection spent this round's control budget.
  bool budget_spent() const { return budget_spent_; }

 private:
  Forwarder& f_;
  std::shared_ptr<Connection> conn_;
  std::uint64_t round_;
  bool fatal_ = false;
  bool violation_ = false;
  bool budget_spent_ = false;
};

}  // namespace zipper::forwarder
