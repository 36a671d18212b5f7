#include "tcp_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "../payload_pipe.h"
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

// "IP:PORT" of one end of a connected socket ("" when it has none).
std::string end_text(int fd, bool local) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  auto* sa = reinterpret_cast<sockaddr*>(&ss);
  if ((local ? ::getsockname(fd, sa, &len) : ::getpeername(fd, sa, &len)) != 0) return {};
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr))  // a dual-stack listener's view of IPv4
      inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], buf, sizeof buf);
    else
      inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(a->sin6_port));
  }
  return {};
}

}  // namespace

TcpLink::TcpLink(UniqueFd fd, std::string peer)
    : fd_(std::move(fd)),
      peer_(std::move(peer)),
      local_(end_text(fd_.get(), true)),
      remote_(end_text(fd_.get(), false)),
      asm_(peer_) {
  set_nonblocking_nodelay(fd_.get());
}

void TcpLink::post(OutFrame frame) {
  std::lock_guard lk(send_mu_);
  sendq_.push(std::move(frame));
}

bool TcpLink::send_pending() const {
  std::lock_guard lk(send_mu_);
  return !sendq_.empty();
}

std::size_t TcpLink::send_queued_bytes() const {
  std::lock_guard lk(send_mu_);
  return sendq_.queued_bytes();
}

LinkStatus TcpLink::progress_send() {
  // Finished frames are destroyed (and their callbacks run) after unlocking:
  // their payload owners may post to other links.
  std::vector<QueuedFrame> done;
  LinkStatus status = LinkStatus::kOk;
  {
    std::lock_guard lk(send_mu_);
    while (!sendq_.empty()) {
      QueuedFrame& front = sendq_.front();
      if (front.encoded && front.frame.payload.pipe && front.handed >= kHeaderSize &&
          !front.all_handed()) {
        if (!splice_out(front, &status)) break;
        done.push_back(std::move(front));
        sendq_.pop_front();
      } else {
        iovec iov[kMaxIov];
        int n = 0;
        bool piped = false;  // the iov ends with the header of a piped payload
        for (auto it = sendq_.begin(); it != sendq_.end() && n + 2 <= kMaxIov && !piped; ++it) {
          QueuedFrame& p = *it;
          if (!sendq_.encode(p, hook_)) continue;  // dropped by the hook, or nothing left
          std::size_t off = p.handed;
          if (off < kHeaderSize) {
            iov[n++] = {p.wire.data() + off, kHeaderSize - off};
            off = kHeaderSize;
          }
          // A piped payload follows its header by splice(), never through the iov.
          piped = p.frame.payload.pipe != nullptr;
          const std::size_t poff = off - kHeaderSize;
          if (!piped && poff < p.frame.payload.bytes.size())
            iov[n++] = {p.frame.payload.bytes.data() + poff, p.frame.payload.bytes.size() - poff};
        }
        ssize_t w = 0;
        if (n > 0) {
          // sendmsg with MSG_NOSIGNAL rather than writev: a peer that went away
          // must surface as EPIPE/kError, not as a process-killing SIGPIPE
          // (libmmpi runs inside MPI applications that do not ignore it).
          // MSG_MORE before a piped payload: the header leaves with it.
          msghdr msg{};
          msg.msg_iov = iov;
          msg.msg_iovlen = static_cast<decltype(msg.msg_iovlen)>(n);
          w = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | (piped ? MSG_MORE : 0));
          if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            status = fail_errno("sendmsg", errno);
            break;
          }
        }
        // Account written bytes frame by frame: the iov held all that was
        // left of each frame, or of a piped payload's frame only its header.
        std::size_t left = static_cast<std::size_t>(w);
        while (!sendq_.empty()) {
          QueuedFrame& p = sendq_.front();
          if (!p.encoded) break;
          const std::size_t end = p.frame.payload.pipe ? kHeaderSize : p.total();
          const std::size_t take = std::min(end > p.handed ? end - p.handed : 0, left);
          sendq_.handed(p, take);
          left -= take;
          if (!p.all_handed()) break;
          done.push_back(std::move(p));
          sendq_.pop_front();
        }
        if (n == 0 && sendq_.empty()) break;
      }
    }
  }
  for (auto& p : done)
    if (p.frame.on_sent) p.frame.on_sent();
  return status;
}

bool TcpLink::splice_out(QueuedFrame& p, LinkStatus* status) {
  PayloadPipe& pipe = *p.frame.payload.pipe;
  for (;;) {
    const std::size_t left = p.total() - p.handed;
    if (left == 0) return true;
    if (pipe.held() < left) {  // cannot happen: the whole payload was received first
      *status = fail({LinkErrorKind::kInternal, 0,
                      "internal: piped payload holds " + std::to_string(pipe.held()) + " bytes, " +
                          std::to_string(left) + " to send to " + peer_});
      return false;
    }
    // No SPLICE_F_MORE: the next frame may be dropped by the header hook,
    // and nothing would then push a corked tail out.
    const long w = pipe.drain_to(fd_.get(), left, false);
    if (w > 0) {
      sendq_.handed(p, static_cast<std::size_t>(w));
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    *status = fail_errno("splice", w == 0 ? EIO : errno);
    return false;
  }
}

std::optional<LinkStatus> TcpLink::consume_staged(RecvSink& sink, std::size_t max_frames,
                                                  std::size_t* frames) {
  const std::size_t limit = max_frames == 0 ? 0 : max_frames - *frames;
  const auto r =
      asm_.feed(std::span<const std::byte>(rbuf_.data() + rpos_, rend_ - rpos_), sink, limit);
  rpos_ += r.consumed;
  *frames += r.frames;
  switch (r.outcome) {
    case FrameAssembler::Outcome::kNeedMore:
      rpos_ = rend_ = 0;  // all used: staging starts over, nothing to compact
      return std::nullopt;
    case FrameAssembler::Outcome::kPaused:
      return LinkStatus::kPaused;
    case FrameAssembler::Outcome::kLimit:
      return LinkStatus::kOk;
    case FrameAssembler::Outcome::kError:
      break;
  }
  return fail(asm_.error());
}

LinkStatus TcpLink::progress_recv(RecvSink& sink, std::size_t max_frames) {
  std::size_t frames = 0;
  // Staging starts small (kInitialStagingSize) and grows with traffic.
  if (rbuf_.empty()) rbuf_.resize(kInitialStagingSize);
  // A read shorter than asked emptied the socket's queue: another read would
  // only return EAGAIN, a system call per frame on every hop of a small
  // message. Data that arrives later wakes the poller again.
  const bool stop_short = stop_short_ && !hangup_;
  bool drained = false;
  for (;;) {
    // Staged bytes first; with none, a paused destination request is retried.
    if (rpos_ < rend_ || asm_.awaiting_dest())
      if (auto st = consume_staged(sink, max_frames, &frames)) return *st;
    if (drained && stop_short) return LinkStatus::kOk;
    if (PayloadPipe* pipe = asm_.direct_pipe()) {
      if (auto st = splice_in(*pipe, sink, max_frames, &frames)) return *st;
      continue;
    }
    const std::span<std::byte> direct = asm_.direct_span();
    if (direct.size() >= kDirectReadMin) {
      // Large remainder: read straight into the destination (zero copy). The
      // same system call picks up the next frame's header into staging, and
      // no more, so that a following large payload is not copied through
      // staging either.
      iovec iov[2] = {{direct.data(), direct.size()}, {rbuf_.data(), kHeaderSize}};
      const ssize_t r = ::readv(fd_.get(), iov, 2);
      if (r > 0) {
        const std::size_t take = std::min<std::size_t>(r, direct.size());
        rend_ = static_cast<std::size_t>(r) - take;
        drained = static_cast<std::size_t>(r) < direct.size() + kHeaderSize;
        if (asm_.direct_received(take, sink) && max_frames != 0 && ++frames >= max_frames)
          return LinkStatus::kOk;
      } else if (r == 0) {
        return fail({LinkErrorKind::kTruncated, 0,
                     "connection closed by " + peer_ + " in the middle of a frame"});
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return LinkStatus::kOk;
      } else if (errno != EINTR) {
        return fail_errno("read", errno);
      }
      continue;
    }
    // After a large payload, expect another (a rendezvous chunk stream):
    // read just the header, so the payload goes straight to its destination.
    // Otherwise take many small frames in one system call.
    const bool large_stream = !asm_.in_frame() && asm_.last_payload_len() >= kDirectReadMin;
    const std::size_t want = large_stream ? kHeaderSize - asm_.header_bytes() : rbuf_.size();
    const ssize_t r = ::read(fd_.get(), rbuf_.data(), want);
    if (r > 0) {
      rend_ = static_cast<std::size_t>(r);
      drained = rend_ < want;
      if (rend_ == rbuf_.size() && rbuf_.size() < kStagingSize)
        rbuf_.resize(kStagingSize);  // a full read: traffic, not an idle link
    } else if (r == 0) {
      if (!asm_.at_boundary())
        return fail({LinkErrorKind::kTruncated, 0,
                     "connection closed by " + peer_ + " in the middle of a frame"});
      return LinkStatus::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return LinkStatus::kOk;
    } else if (errno != EINTR) {
      return fail_errno("read", errno);
    }
  }
}

std::optional<LinkStatus> TcpLink::splice_in(PayloadPipe& pipe, RecvSink& sink,
                                             std::size_t max_frames, std::size_t* frames) {
  const long r = pipe.fill_from(fd_.get(), asm_.direct_remaining());
  if (r > 0) {
    if (asm_.direct_received(static_cast<std::size_t>(r), sink) && max_frames != 0 &&
        ++*frames >= max_frames)
      return LinkStatus::kOk;
    return std::nullopt;
  }
  if (r == 0)
    return fail({LinkErrorKind::kTruncated, 0,
                 "connection closed by " + peer_ + " in the middle of a frame"});
  if (errno == EINTR) return std::nullopt;
  if (errno != EAGAIN && errno != EWOULDBLOCK) return fail_errno("splice", errno);
  // EAGAIN with bytes waiting means the pipe ran out of slots (packets of
  // unusually small fragments): the rest of the frame is copied instead.
  int waiting = 0;
  if (::ioctl(fd_.get(), FIONREAD, &waiting) == 0 && waiting > 0) {
    if (!asm_.unpipe()) return fail(asm_.error());
    return std::nullopt;
  }
  return LinkStatus::kOk;
}

void TcpLink::shutdown() { ::shutdown(fd_.get(), SHUT_RDWR); }

void TcpLink::shutdown_send() { ::shutdown(fd_.get(), SHUT_WR); }

LinkStatus TcpLink::fail(LinkError e) {
  std::lock_guard lk(err_mu_);
  if (!error_) error_ = std::move(e);
  return LinkStatus::kError;
}

LinkStatus TcpLink::fail_errno(const char* call, int err) {
  LinkError e = LinkError::from_errno(call, err);
  e.message += " (" + peer_ + ")";
  return fail(std::move(e));
}

LinkError TcpLink::last_error() const {
  std::lock_guard lk(err_mu_);
  return error_;
}

TcpListener::TcpListener(const Endpoint& ep) {
  const sockaddr_in a = resolve_ipv4(ep);
  fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd_) throw LinkFailure(LinkError::from_errno("socket", errno));
  int one = 1;
  setsockopt(fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    LinkError e = LinkError::from_errno("bind", errno);
    e.message = "cannot listen on " + ep.to_string() + ": " + e.message;
    throw LinkFailure(std::move(e));
  }
  if (::listen(fd_.get(), 512) != 0) throw LinkFailure(LinkError::from_errno("listen", errno));
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  address_ = sockaddr_text(bound);
}

std::unique_ptr<Link> TcpListener::accept() {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  UniqueFd fd(::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&a), &len, SOCK_CLOEXEC));
  if (!fd) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      accept_error_ = errno;
    return nullptr;  // EAGAIN or a transient error: nothing to accept
  }
  return std::make_unique<TcpLink>(std::move(fd), sockaddr_text(a));
}

std::unique_ptr<Link> tcp_connect(const Endpoint& ep, int timeout_ms) {
  const sockaddr_in a = resolve_ipv4(ep);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw LinkFailure(LinkError::from_errno("socket", errno));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0)
      return std::make_unique<TcpLink>(std::move(fd), ep.to_string());
    LinkError e = LinkError::from_errno("connect", errno);
    const bool retry = errno == ECONNREFUSED || errno == ETIMEDOUT || errno == EINTR;
    const bool late = std::chrono::steady_clock::now() >= deadline;
    if (!retry || late) {
      e.message =
          "cannot connect to zipperd at " + ep.to_string() + ": " + std::strerror(e.sys_errno);
      throw LinkFailure(std::move(e));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace zipper::proto::tcp
