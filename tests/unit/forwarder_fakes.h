// Stand-ins for testing zipperd's collaborators without sockets or threads:
// a link that keeps what is posted to it, and a host that records what the
// collaborators ask of the forwarder.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "forwarder/connection_host.h"
#include "proto/link.h"

namespace zipper::test {

class FakeLink final : public proto::Link {
 public:
  explicit FakeLink(std::string peer = "fake:1") : peer_(std::move(peer)) {}
  int poll_fd() const override { return -1; }
  void post(proto::OutFrame frame) override { posted.push_back(std::move(frame)); }
  proto::LinkStatus progress_send() override { return proto::LinkStatus::kOk; }
  bool send_pending() const override { return false; }
  std::size_t send_queued_bytes() const override { return 0; }
  proto::LinkStatus progress_recv(proto::RecvSink&, std::size_t) override {
    return proto::LinkStatus::kOk;
  }
  void set_max_payload(std::uint32_t) override {}
  void set_header_hook(proto::HeaderHook) override {}
  void shutdown() override {}
  void shutdown_send() override {}
  proto::LinkError last_error() const override { return {}; }
  std::string peer() const override { return peer_; }

  std::vector<proto::OutFrame> posted;  // every frame posted, oldest first

 private:
  std::string peer_;
};

/// The frames posted to `c`'s link (a FakeLink).
inline FakeLink& fake_link_of(const std::shared_ptr<forwarder::Connection>& c) {
  return static_cast<FakeLink&>(*c->link);
}

class FakeHost final : public forwarder::ConnectionHost {
 public:
  void on_frame(const std::shared_ptr<forwarder::Connection>&, const proto::FrameHeader&,
                proto::Payload) override {}
  void close_conn(const std::shared_ptr<forwarder::Connection>& c,
                  const std::string& why) override {
    c->closed = true;
    closed.push_back(why);
  }
  void wake_receivers() override { ++wakes; }
  void defer(std::function<void()> task) override {  // no reaper: at once
    ++deferred;
    task();
  }

  std::vector<std::string> closed;  // the reasons, in order
  int wakes = 0;
  int deferred = 0;  // tasks handed to the reaper
};

}  // namespace zipper::test
