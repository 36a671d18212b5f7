#include "tcp_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "../resolve.h"

namespace zipper::proto::tcp {
namespace {

constexpr std::size_t kStagingSize = 256 * 1024;  // bytes; one read() picks up many small frames
// Staging starts small and grows to kStagingSize only when a read fills it:
// idle and pre-hello connections (thousands, on a shared zipperd) then cost
// 4 KiB each instead of 256 KiB.
constexpr std::size_t kInitialStagingSize = 4096;
constexpr std::size_t kDirectReadMin =
    16 * 1024;  // bytes; larger payload remainders bypass staging
constexpr int kMaxIov = 64;
constexpr int kNotSentLowat = 512 * 1024;  // bytes of unsent data the kernel may hold

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void set_nonblocking_nodelay(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Keep little unsent data in the kernel, so that urgent frames (see
  // OutFrame::urgent) reach the wire soon after they are posted.
  int lowat = kNotSentLowat;
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
}

std::string sockaddr_text(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return std::string("tcp:") + buf + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

TcpLink::TcpLink(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {
  set_nonblocking_nodelay(fd_);
}

TcpLink::~TcpLink() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpLink::post(OutFrame frame) {
  frame.hdr.payload_len = static_cast<std::uint32_t>(frame.payload.bytes.size());
  std::lock_guard lk(send_mu_);
  queued_bytes_ += kHeaderSize + frame.payload.bytes.size();
  if (!frame.urgent) {
    sendq_.push_back(Pending{std::move(frame)});
    return;
  }
  // Behind the frame being written and earlier urgent frames only: a credit
  // return queued behind megabytes of data would stall the opposite
  // direction for as long as that data takes to drain.
  auto it = sendq_.begin();
  if (it != sendq_.end() && it->sent > 0) ++it;
  while (it != sendq_.end() && it->frame.urgent && it->sent == 0) ++it;
  sendq_.insert(it, Pending{std::move(frame)});
}

bool TcpLink::send_pending() const {
  std::lock_guard lk(send_mu_);
  return !sendq_.empty();
}

std::size_t TcpLink::send_queued_bytes() const {
  std::lock_guard lk(send_mu_);
  return queued_bytes_;
}

LinkStatus TcpLink::progress_send() {
  // Finished frames are destroyed (and their callbacks run) after unlocking:
  // their payload owners may post to other links.
  std::vector<Pending> done;
  LinkStatus status = LinkStatus::kOk;
  {
    std::lock_guard lk(send_mu_);
    while (!sendq_.empty()) {
      iovec iov[kMaxIov];
      int n = 0;
      for (auto it = sendq_.begin(); it != sendq_.end() && n + 2 <= kMaxIov; ++it) {
        Pending& p = *it;
        if (!p.encoded) {
          if (hook_ && !hook_(p.frame.hdr)) {
            p.encoded = true;
            queued_bytes_ -= p.total();
            p.sent = p.total();  // dropped by the hook: counts as sent
            continue;
          }
          encode_header(p.frame.hdr, p.wire);
          p.encoded = true;
        }
        std::size_t off = p.sent;
        if (off < kHeaderSize) {
          iov[n++] = {p.wire.data() + off, kHeaderSize - off};
          off = kHeaderSize;
        }
        const std::size_t poff = off - kHeaderSize;
        if (poff < p.frame.payload.bytes.size())
          iov[n++] = {p.frame.payload.bytes.data() + poff, p.frame.payload.bytes.size() - poff};
      }
      ssize_t w = 0;
      if (n > 0) {
        // sendmsg with MSG_NOSIGNAL rather than writev: a peer that went away
        // must surface as EPIPE/kError, not as a process-killing SIGPIPE
        // (libmmpi runs inside MPI applications that do not ignore it).
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = static_cast<decltype(msg.msg_iovlen)>(n);
        w = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        if (w < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;
          if (errno == EINTR) continue;
          status = fail(errno_text("sendmsg"));
          break;
        }
      }
      // Account written bytes frame by frame.
      std::size_t left = static_cast<std::size_t>(w);
      while (!sendq_.empty()) {
        Pending& p = sendq_.front();
        if (!p.encoded) break;
        const std::size_t need = p.total() - p.sent;
        const std::size_t take = std::min(need, left);
        p.sent += take;
        left -= take;
        queued_bytes_ -= take;
        if (p.sent < p.total()) break;
        done.push_back(std::move(p));
        sendq_.pop_front();
      }
      if (n == 0 && sendq_.empty()) break;
    }
  }
  for (auto& p : done)
    if (p.frame.on_sent) p.frame.on_sent();
  return status;
}

LinkStatus TcpLink::progress_recv(RecvSink& sink, std::size_t max_frames) {
  std::size_t frames = 0;
  for (;;) {
    if (!have_header_) {
      if (rend_ - rpos_ >= kHeaderSize) {
        const auto dec = decode_header(
            std::span<const std::byte>(rbuf_.data() + rpos_, kHeaderSize), max_payload_, &rhdr_);
        if (dec != DecodeError::kOk)
          return fail("malformed frame from " + peer_ + ": " + std::string(to_string(dec)));
        rpos_ += kHeaderSize;
        have_header_ = true;
        rgot_ = 0;
        rdest_.reset();
      }
    }
    if (have_header_) {
      if (!rdest_) {
        rdest_ = sink.payload_dest(rhdr_);
        if (!rdest_) return LinkStatus::kPaused;
        if (rdest_->bytes.size() != rhdr_.payload_len)
          return fail("internal: payload buffer size mismatch");
      }
      const std::size_t need = rhdr_.payload_len - rgot_;
      const std::size_t staged = std::min(need, rend_ - rpos_);
      if (staged > 0) {
        std::memcpy(rdest_->bytes.data() + rgot_, rbuf_.data() + rpos_, staged);
        rpos_ += staged;
        rgot_ += staged;
      }
      if (rgot_ < rhdr_.payload_len && rhdr_.payload_len - rgot_ >= kDirectReadMin) {
        // Large remainder: read straight into the destination (zero copy).
        // The staging buffer is empty here; the same system call picks up
        // the next frame's header into it, and no more, so that a following
        // large payload is not copied through staging either.
        rpos_ = rend_ = 0;
        iovec iov[2] = {{rdest_->bytes.data() + rgot_, rhdr_.payload_len - rgot_},
                        {rbuf_.data(), kHeaderSize}};
        const ssize_t r = ::readv(fd_, iov, 2);
        if (r > 0) {
          const std::size_t take = std::min<std::size_t>(r, rhdr_.payload_len - rgot_);
          rgot_ += take;
          rend_ = static_cast<std::size_t>(r) - take;
        } else if (r == 0) {
          return fail("connection closed by " + peer_ + " in the middle of a frame");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
          return LinkStatus::kOk;
        } else if (errno != EINTR) {
          return fail(errno_text("read"));
        }
        continue;
      }
      if (rgot_ == rhdr_.payload_len) {
        have_header_ = false;
        large_stream_ = rhdr_.payload_len >= kDirectReadMin;
        Payload p = std::move(*rdest_);
        rdest_.reset();
        sink.on_frame(rhdr_, std::move(p));
        if (max_frames != 0 && ++frames >= max_frames) return LinkStatus::kOk;
        continue;
      }
    }
    // Need more bytes in staging: compact and read.
    if (rpos_ == rend_) {
      rpos_ = rend_ = 0;
    } else if (rpos_ > 0 && rbuf_.size() - rend_ < kHeaderSize) {
      std::memmove(rbuf_.data(), rbuf_.data() + rpos_, rend_ - rpos_);
      rend_ -= rpos_;
      rpos_ = 0;
    }
    if (rbuf_.empty()) rbuf_.resize(kInitialStagingSize);
    // After a large payload, expect another (a rendezvous chunk stream):
    // read just the header, so the payload goes straight to its destination.
    // Otherwise take many small frames in one system call.
    const std::size_t want =
        large_stream_ && !have_header_ ? kHeaderSize - (rend_ - rpos_) : rbuf_.size() - rend_;
    const ssize_t r = ::read(fd_, rbuf_.data() + rend_, want);
    if (r > 0) {
      if (rend_ + static_cast<std::size_t>(r) == rbuf_.size() && rbuf_.size() < kStagingSize)
        rbuf_.resize(kStagingSize);  // a full read: traffic, not an idle link
      rend_ += static_cast<std::size_t>(r);
    } else if (r == 0) {
      if (have_header_ || rend_ != rpos_)
        return fail("connection closed by " + peer_ + " in the middle of a frame");
      return LinkStatus::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return LinkStatus::kOk;
    } else if (errno != EINTR) {
      return fail(errno_text("read"));
    }
  }
}

void TcpLink::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

void TcpLink::shutdown_send() { ::shutdown(fd_, SHUT_WR); }

LinkStatus TcpLink::fail(std::string why) {
  std::lock_guard lk(err_mu_);
  if (error_.empty()) error_ = std::move(why);
  return LinkStatus::kError;
}

std::string TcpLink::error() const {
  std::lock_guard lk(err_mu_);
  return error_;
}

TcpListener::TcpListener(const Endpoint& ep) {
  const sockaddr_in a = resolve_ipv4(ep);
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(errno_text("socket"));
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const std::string why = errno_text("bind");
    ::close(fd_);
    throw std::runtime_error("cannot listen on " + ep.to_string() + ": " + why);
  }
  if (::listen(fd_, 512) != 0) {
    const std::string why = errno_text("listen");
    ::close(fd_);
    throw std::runtime_error(why);
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  address_ = sockaddr_text(bound);
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<Link> TcpListener::accept() {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  const int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      accept_error_ = errno;
    return nullptr;  // EAGAIN or a transient error: nothing to accept
  }
  return std::make_unique<TcpLink>(fd, sockaddr_text(a));
}

std::unique_ptr<Link> tcp_connect(const Endpoint& ep, int timeout_ms) {
  const sockaddr_in a = resolve_ipv4(ep);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last = "timed out";
  for (;;) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(errno_text("socket"));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0)
      return std::make_unique<TcpLink>(fd, ep.to_string());
    last = std::strerror(errno);
    const bool retry = errno == ECONNREFUSED || errno == ETIMEDOUT || errno == EINTR;
    ::close(fd);
    if (!retry || std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("cannot connect to zipperd at " + ep.to_string() + ": " + last);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace zipper::proto::tcp
