// The link interface: one connection carrying frames between a client and
// zipperd. Backends (TCP today, verbs next) sit behind it; the forwarder and
// the client only see this.
//
// Threading: post() and progress_send() may be called from any thread;
// progress_recv() from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frame.h"
#include "link_error.h"
#include "payload.h"
#include "verbs/config.h"

namespace zipper::proto {

/// One frame to send. hdr.payload_len is set from payload.bytes.size().
struct OutFrame {
  FrameHeader hdr;
  Payload payload;  // must stay valid until the frame is sent (see on_sent)
  /// Runs once every byte is handed to the transport, on the thread that
  /// progressed the send, with no link lock held. May be empty.
  std::function<void()> on_sent;
  /// A control frame that a peer is waiting on (returned credit): sent ahead
  /// of frames queued but not yet started, in order among urgent frames.
  /// Data frames must not be urgent (per-pair order). Backends without
  /// separate queues may send it in order.
  bool urgent = false;
};

/// Receives decoded frames from Link::progress_recv.
class RecvSink {
 public:
  virtual ~RecvSink() = default;
  /// Where the payload of `hdr` goes: a Payload of exactly hdr.payload_len
  /// bytes, or nullopt to pause receiving (e.g. no memory now). A paused link
  /// asks again on the next progress_recv.
  virtual std::optional<Payload> payload_dest(const FrameHeader& hdr) = 0;
  /// The frame is complete; `payload` is what payload_dest returned.
  virtual void on_frame(const FrameHeader& hdr, Payload payload) = 0;
};

enum class LinkStatus {
  kOk,      // made all the progress currently possible
  kPaused,  // the sink refused a payload buffer; call again later
  kClosed,  // the peer closed cleanly at a frame boundary
  kError,   // I/O error, truncated frame or malformed header; see last_error()
};

/// Hook run on each header just before it is encoded for the wire (zipperd
/// uses it to piggyback returned credits). Returns false to drop the frame.
using HeaderHook = std::function<bool(FrameHeader&)>;

class Link {
 public:
  virtual ~Link() = default;
  Link() = default;
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  /// File descriptor to wait on (epoll/poll) for receive and send readiness.
  virtual int poll_fd() const = 0;
  /// Queues a frame; never blocks and never fails (errors surface from progress).
  virtual void post(OutFrame frame) = 0;
  /// Sends as much queued data as the transport takes now.
  virtual LinkStatus progress_send() = 0;
  /// True when frames are queued but not yet fully sent.
  virtual bool send_pending() const = 0;
  /// Bytes queued but not yet sent.
  virtual std::size_t send_queued_bytes() const = 0;
  /// Receives and delivers up to `max_frames` frames (0 = until the transport is empty).
  virtual LinkStatus progress_recv(RecvSink& sink, std::size_t max_frames = 0) = 0;
  /// On: progress_recv() returns after a read shorter than asked (the socket
  /// held no more at that moment) instead of reading again to see EAGAIN,
  /// one system call less per small frame on every hop. An end of stream
  /// that came with the last data is then seen only by the next call: a
  /// caller that waits on an edge-triggered epoll must call
  /// note_peer_hangup() on EPOLLRDHUP, EPOLLHUP or EPOLLERR; a level-
  /// triggered poll() reports it by itself. Off by default (links that read
  /// at all: TCP).
  virtual void stop_at_short_read(bool) {}
  /// The poller saw the peer hang up, or an error: from now on progress_recv()
  /// reads until EAGAIN, the end of stream or an error.
  virtual void note_peer_hangup() {}
  /// Largest payload this link accepts on receive (bytes).
  virtual void set_max_payload(std::uint32_t bytes) = 0;
  virtual void set_header_hook(HeaderHook hook) = 0;
  /// Shuts the connection down in both directions (wakes any waiter).
  virtual void shutdown() = 0;
  /// Orderly close of the sending direction once every posted frame is sent
  /// (send_pending() false): the peer reads a clean end of stream after the
  /// last frame, while this side keeps receiving until the peer closes too.
  /// Closing with unread input instead would reset the connection and could
  /// destroy frames still in flight.
  virtual void shutdown_send() = 0;
  /// The first error the link met (kind kNone while there is none). Callers
  /// branch on LinkError::kind, e.g. kMalformed is a protocol error of the peer.
  virtual LinkError last_error() const = 0;
  /// Human-readable description of the last error ("" while there is none).
  std::string error() const { return last_error().message; }
  /// True when the link receives into and sends from payloads held in a
  /// kernel pipe (Payload::pipe) by splice(): TCP. Other links read such a
  /// payload's bytes only after materialize() (payload_pipe.h).
  virtual bool splices() const { return false; }
  /// "tcp:1.2.3.4:5678" or similar, for logs.
  virtual std::string peer() const = 0;
  /// The connection's ends as this side's kernel sees them, "IP:PORT" (TCP:
  /// getsockname / getpeername at setup); "" for links without IP ends.
  /// Admission binds them (auth.h), so a connection relayed through another
  /// socket does not pass as the one the rank opened.
  virtual std::string local_address() const { return {}; }
  virtual std::string remote_address() const { return {}; }
  /// True when connect() already handed the caller's ConnectHello to the peer
  /// during connection setup (verbs: in the RDMA CM private data); the caller
  /// then sends no HELLO frame. The accepting side's link delivers that hello
  /// to its sink as the connection's first frame, a HELLO frame like any
  /// other, so the forwarder's admission logic is the same for every link.
  virtual bool hello_delivered() const { return false; }
};

/// Accepts incoming links.
class Listener {
 public:
  virtual ~Listener() = default;
  virtual int poll_fd() const = 0;
  /// Accepts one pending connection, or returns nullptr when none is pending.
  virtual std::unique_ptr<Link> accept() = 0;
  virtual std::string address() const = 0;
  /// Connection attempts refused since the last call, "PEER: reason" each
  /// (for the log; e.g. a verbs connect request with a malformed hello).
  virtual std::vector<std::string> take_refused() { return {}; }
  /// errno of the last accept that failed for lack of a resource (EMFILE,
  /// ENFILE, ENOBUFS, ENOMEM), then 0: the caller should pause accepting.
  virtual int take_accept_error() { return 0; }
};

/// "scheme:host:port" with scheme tcp (default) or verbs.
struct Endpoint {
  std::string scheme = "tcp";
  std::string host;
  std::uint16_t port = 0;
  std::string to_string() const { return scheme + ":" + host + ":" + std::to_string(port); }
};

/// Parses "[tcp:]HOST:PORT". Returns nullopt and sets *why on bad input.
std::optional<Endpoint> parse_endpoint(const std::string& text, std::string* why);

/// Opens a listener for `ep`. Throws std::runtime_error with a clear message
/// (unsupported scheme, bind failure, ...); LinkFailure (a runtime_error)
/// where the cause has a LinkErrorKind. `verbs_cfg` tunes verbs: listeners and
/// the links they accept (the process's settings; TCP ignores it).
std::unique_ptr<Listener> listen(const Endpoint& ep, const verbs::Config& verbs_cfg = {});

/// Who connects: the content of a client's HELLO frame (a SiteHello,
/// site_hello.h, plus the job id): world rank `vrank` in site `site` of the
/// job's site table.
struct ConnectHello {
  std::uint64_t job_id = 0;
  std::uint32_t vrank = 0;                // virtual (world) rank
  std::uint32_t site = 0;                 // the rank's site
  std::vector<std::uint32_t> site_ranks;  // ranks per site, in world-rank order
};

/// Connects to `ep`, retrying refused connections until `timeout_ms` elapses.
/// `hello` (may be null) travels in the connection setup where the backend
/// can carry it (see Link::hello_delivered). Throws std::runtime_error on
/// failure; LinkFailure (a runtime_error) with kRefused when nobody listens or
/// the peer refused the hello, kTimeout when no answer came in time.
/// `verbs_cfg` tunes a verbs: link (the process's settings; TCP ignores it).
std::unique_ptr<Link> connect(const Endpoint& ep, int timeout_ms,
                              const ConnectHello* hello = nullptr,
                              const verbs::Config& verbs_cfg = {});

}  // namespace zipper::proto
