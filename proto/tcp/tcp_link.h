// TCP backend of the link interface: non-blocking sockets, TCP_NODELAY,
// scatter-gather sendmsg (MSG_NOSIGNAL), batched reads for small frames.
#pragma once

#include <sys/uio.h>

#include <array>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "../link.h"

namespace zipper::proto::tcp {

class TcpLink final : public Link {
 public:
  /// Takes ownership of a connected socket and makes it non-blocking.
  TcpLink(int fd, std::string peer);
  ~TcpLink() override;

  int poll_fd() const override { return fd_; }
  void post(OutFrame frame) override;
  LinkStatus progress_send() override;
  bool send_pending() const override;
  std::size_t send_queued_bytes() const override;
  LinkStatus progress_recv(RecvSink& sink, std::size_t max_frames) override;
  void set_max_payload(std::uint32_t bytes) override { max_payload_ = bytes; }
  void set_header_hook(HeaderHook hook) override { hook_ = std::move(hook); }
  void shutdown() override;
  void shutdown_send() override;
  std::string error() const override;
  std::string peer() const override { return peer_; }

 private:
  struct Pending {
    OutFrame frame;
    std::array<std::byte, kHeaderSize> wire{};
    bool encoded = false;
    std::size_t sent = 0;  // bytes of header+payload already written
    std::size_t total() const { return kHeaderSize + frame.payload.bytes.size(); }
  };
  LinkStatus fail(std::string why);

  int fd_;
  std::string peer_;
  std::uint32_t max_payload_ = kMaxPayloadLimit;
  HeaderHook hook_;

  mutable std::mutex send_mu_;
  std::deque<Pending> sendq_;
  std::size_t queued_bytes_ = 0;

  // Receive state (single receiving thread).
  std::vector<std::byte> rbuf_;  // staging for headers and small payloads
  std::size_t rpos_ = 0, rend_ = 0;
  bool have_header_ = false;
  FrameHeader rhdr_;
  std::optional<Payload> rdest_;
  std::size_t rgot_ = 0;       // payload bytes received so far
  bool large_stream_ = false;  // the last payload was read directly: expect another

  mutable std::mutex err_mu_;
  std::string error_;
};

class TcpListener final : public Listener {
 public:
  explicit TcpListener(const Endpoint& ep);
  ~TcpListener() override;
  int poll_fd() const override { return fd_; }
  std::unique_ptr<Link> accept() override;
  std::string address() const override { return address_; }
  int take_accept_error() override { return std::exchange(accept_error_, 0); }

 private:
  int fd_ = -1;
  int accept_error_ = 0;
  std::string address_;
};

/// Connects with retries on ECONNREFUSED until timeout_ms. Throws on failure.
std::unique_ptr<Link> tcp_connect(const Endpoint& ep, int timeout_ms);

}  // namespace zipper::proto::tcp
