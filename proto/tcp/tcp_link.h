// TCP backend of the link interface: non-blocking sockets, TCP_NODELAY,
// scatter-gather sendmsg (MSG_NOSIGNAL), batched reads for small frames, and
// splice() for payloads held in a pipe (zipperd's TCP -> TCP relay).
#pragma once

#include <sys/uio.h>

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "../frame_assembler.h"
#include "../link.h"
#include "../send_queue.h"
#include "../unique_fd.h"

namespace zipper::proto::tcp {

class TcpLink final : public Link {
 public:
  /// Takes ownership of a connected socket and makes it non-blocking.
  TcpLink(UniqueFd fd, std::string peer);

  int poll_fd() const override { return fd_.get(); }
  void post(OutFrame frame) override;
  LinkStatus progress_send() override;
  bool send_pending() const override;
  std::size_t send_queued_bytes() const override;
  LinkStatus progress_recv(RecvSink& sink, std::size_t max_frames) override;
  void stop_at_short_read(bool on) override { stop_short_ = on; }
  void note_peer_hangup() override { hangup_ = true; }
  void set_max_payload(std::uint32_t bytes) override { asm_.set_max_payload(bytes); }
  void set_header_hook(HeaderHook hook) override { hook_ = std::move(hook); }
  void shutdown() override;
  void shutdown_send() override;
  LinkError last_error() const override;
  std::string peer() const override { return peer_; }
  std::string local_address() const override { return local_; }
  std::string remote_address() const override { return remote_; }
  bool splices() const override { return true; }

 private:
  LinkStatus fail(LinkError e);
  LinkStatus fail_errno(const char* call, int err);
  /// Feeds staged bytes to the assembler; kOk when all were used and more
  /// are wanted, otherwise the status to return (paused, frame limit, error).
  std::optional<LinkStatus> consume_staged(RecvSink& sink, std::size_t max_frames,
                                           std::size_t* frames);
  /// Splices the rest of the current payload from the socket into its pipe;
  /// nullopt to go on reading, otherwise the status to return.
  std::optional<LinkStatus> splice_in(PayloadPipe& pipe, RecvSink& sink, std::size_t max_frames,
                                      std::size_t* frames);
  /// Sends the front frame's piped payload (its header is out). Returns
  /// false when the socket is full or the link failed (*status set).
  bool splice_out(QueuedFrame& p, LinkStatus* status);

  UniqueFd fd_;
  std::string peer_;
  std::string local_, remote_;  // "IP:PORT" from getsockname / getpeername
  HeaderHook hook_;

  mutable std::mutex send_mu_;
  SendQueue<> sendq_;

  // Receive state (single receiving thread).
  FrameAssembler asm_;
  std::vector<std::byte> rbuf_;  // staging for headers and small payloads
  std::size_t rpos_ = 0, rend_ = 0;
  bool stop_short_ = false;  // stop_at_short_read()
  bool hangup_ = false;      // note_peer_hangup(): read to EAGAIN or EOF again

  mutable std::mutex err_mu_;
  LinkError error_;
};

class TcpListener final : public Listener {
 public:
  explicit TcpListener(const Endpoint& ep);
  int poll_fd() const override { return fd_.get(); }
  std::unique_ptr<Link> accept() override;
  std::string address() const override { return address_; }
  int take_accept_error() override { return std::exchange(accept_error_, 0); }

 private:
  UniqueFd fd_;
  int accept_error_ = 0;
  std::string address_;
};

/// Connects with retries on ECONNREFUSED until timeout_ms. Throws LinkFailure
/// (kTimeout after retrying, kSystem otherwise).
std::unique_ptr<Link> tcp_connect(const Endpoint& ep, int timeout_ms);

}  // namespace zipper::proto::tcp
