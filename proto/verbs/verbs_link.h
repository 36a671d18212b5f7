// Verbs backend of the link interface: one RC QP per connection, set up with
// RDMA CM. Frames travel as SEND_WITH_IMM into receive buffers the peer
// pre-posted (eager; frames larger than a buffer are split into consecutive
// SENDs), guarded by receive credits (credits.h), so receiver-not-ready never
// happens. The receive buffers are the QP's own, or a share of the device's
// SRQ once the device carries more than ZIPPER_VERBS_SRQ_THRESHOLD links
// (srq.h); PD, MR cache and long-lived region MRs are the device's
// (device_context.h). Tiny SENDs go inline; large payloads that lie in a
// long-lived region (zipperd's pools) or have a lifetime owner are sent from
// that registration instead of being copied into a send slot. See
// docs/verbs.md.
//
// poll_fd() is an epoll fd holding the CQs' completion channel and the
// connection's RDMA CM event channel: it turns readable on a completion
// (send or receive) and on a CM event (disconnect). progress_recv() drains
// both and also advances blocked sends (credits returned, send slots freed),
// since completion channels never signal POLLOUT: a caller that waits for
// POLLOUT on poll_fd() never gets it, and needs none (every event that can
// unblock a send, a send completion or returned credit, is a completion that
// wakes a receive wait).
//
// The class is split by concern, as UCX's uct rc_verbs endpoint:
//   verbs_link.cpp          lifecycle: QP/CQ/buffer setup, start, FIN and
//                           disconnect, CM events, errors, teardown
//   verbs_recv.cpp          receive path: CQ polling, one handler per SEND kind
//                           feeding the shared FrameAssembler, credits, keepalive
//   verbs_send.cpp          the send queue (shared SendQueue) and the layer that
//                           picks a send method per frame
//   verbs_send_methods.cpp  one function per send method: inline, copy (send
//                           slot), zero copy (payload's registration), RDMA
//                           WRITE, control (credit, FIN)
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "../frame_assembler.h"
#include "../link.h"
#include "../send_queue.h"
#include "../unique_fd.h"
#include "config.h"
#include "credits.h"
#include "device_context.h"
#include "raii.h"
#include "srq.h"
#include "wire.h"

namespace zipper::proto::verbs {

class VerbsLink final : public Link {
 public:
  /// Takes over a cm_id whose route is resolved (active side) or that came in
  /// with a connect request (passive side), with its own event channel.
  /// Creates completion channel, CQs, QP and MRs (the PD is the device's) and
  /// pre-posts the receive buffers. Throws std::runtime_error on failure.
  VerbsLink(EventChannelPtr channel, CmIdPtr id, Config cfg, std::string peer);
  ~VerbsLink() override;

  /// The peer's receive buffers (from the CM private data): starts sending.
  /// Throws std::runtime_error when the send slots cannot be registered.
  void start(const ConnParams& peer);
  /// What this side offers the peer in the CM private data: its receive
  /// credits and buffer size, and `hello` (client side; may be null).
  ConnParams local_params(const ConnectHello* hello = nullptr) const;
  /// Passive side: the client's hello from the CM private data, delivered to
  /// the sink as a HELLO frame before anything else.
  void set_peer_hello(const ConnectHello& h);
  /// Active side: the hello went in the private data (no HELLO frame needed).
  void set_hello_delivered() { hello_delivered_ = true; }
  bool hello_delivered() const override { return hello_delivered_; }
  /// Receive credits this side grants the peer (own buffers or SRQ share).
  std::uint32_t own_credits() const { return srq_ ? cfg_.srq_credits : cfg_.recv_buffers; }
  rdma_cm_id* cm_id() const { return id_.get(); }

  int poll_fd() const override { return epfd_.get(); }
  void post(OutFrame frame) override;
  LinkStatus progress_send() override;
  bool send_pending() const override;
  std::size_t send_queued_bytes() const override;
  LinkStatus progress_recv(RecvSink& sink, std::size_t max_frames) override;
  void set_max_payload(std::uint32_t bytes) override { asm_.set_max_payload(bytes); }
  void set_header_hook(HeaderHook hook) override;
  void shutdown() override;
  void shutdown_send() override;
  LinkError last_error() const override;
  std::string peer() const override { return peer_; }

 private:
  /// A queued frame and its verbs state.
  struct QueuedSend : QueuedFrame {
    std::uint64_t last_wr = 0;  // sequence number of the last WR carrying its bytes
    HeldRegistration reg;       // the payload's registration (zero copy, RDMA WRITE)
    // RDMA WRITE: header SEND, then (after the peer's grant) the WRITE.
    enum class Write : std::uint8_t { kNo, kAwaitGrant, kGranted } write = Write::kNo;
    WriteGrant grant;
    // Some payload bytes were posted from the payload itself (zero copy or
    // RDMA WRITE): the frame is sent only once those WRs complete. Otherwise
    // every byte was copied (inline or send slot) and the frame counts as
    // sent when posted, like a TCP write into the socket buffer.
    bool zero_copy = false;
  };
  struct PostedWr {
    int slot;  // send slot to free on completion, -1 if none
  };
  struct RecvWc {
    std::uint64_t buf;
    std::uint32_t len;
    std::uint32_t imm;
    std::uint32_t off = 0;  // bytes already consumed (a paused sink resumes here)
    bool credits_taken = false;
  };
  /// Pieces of frames (headers, payload parts) copied into one SEND.
  struct Gather {
    static constexpr int kMaxPieces = 32;
    struct Piece {
      const std::byte* data;
      std::size_t len;
    };
    Piece pieces[kMaxPieces];
    int count = 0;
    std::size_t bytes = 0;
    void add(const std::byte* d, std::size_t n) {
      pieces[count++] = {d, n};
      bytes += n;
    }
  };
  /// What a receive handler did with a receive buffer.
  enum class WcUse : std::uint8_t {
    kDone,    // consumed: repost the buffer
    kHeld,    // frame limit reached inside it: resume at wc.off next time
    kPaused,  // the sink refused a destination: resume at wc.off next time
    kError,   // see last_error()
  };

  // Lifecycle and errors (verbs_link.cpp).
  LinkStatus fail(LinkError e);
  LinkStatus fail(LinkErrorKind kind, std::string why) { return fail({kind, 0, std::move(why)}); }
  LinkStatus fail_wc(const char* what, const ibv_wc& wc);
  bool failed() const;
  LinkStatus drain_cm_events();
  void drain_srq_share();
  void add_readable_eventfd(UniqueFd* fd, const char* what);

  // Send methods (verbs_send_methods.cpp), send_mu_ held. Each returns false
  // when it cannot post now (no credit, send slot or WR room; *st untouched)
  // or the post failed (*st = kError).
  bool post_inline_locked(SendKind kind, const Gather& g, LinkStatus* st);
  bool post_copy_locked(SendKind kind, const Gather& g, LinkStatus* st);
  bool post_zcopy_locked(SendKind kind, const std::byte* data, std::size_t len, std::uint32_t lkey,
                         LinkStatus* st);
  bool post_rdma_write_locked(const std::byte* data, std::size_t len, std::uint32_t lkey,
                              const WriteGrant& grant, LinkStatus* st);
  bool post_control_locked(SendKind kind, LinkStatus* st);
  bool data_room_locked() const;
  bool post_wr_locked(ibv_send_wr& wr, int slot, const char* what, LinkStatus* st);

  // Send progress (verbs_send.cpp): the layer that picks a method per frame.
  using Queue = SendQueue<QueuedSend>;
  LinkStatus progress_send_internal();
  LinkStatus send_locked(std::vector<QueuedSend>& done);
  LinkStatus reap_send_cq_locked(std::vector<QueuedSend>& done);
  void collect_done_locked(std::vector<QueuedSend>& done);
  bool send_next_locked(LinkStatus* st);
  bool send_by_write_locked(QueuedSend& f, LinkStatus* st);
  bool send_zcopy_locked(QueuedSend& f, LinkStatus* st);
  bool send_packed_locked(Queue::iterator head, LinkStatus* st);
  bool send_small_locked(SendKind kind, const std::byte* data, std::size_t len, LinkStatus* st);
  bool by_write(const QueuedSend& f) const {
    return cfg_.write_min > 0 && f.frame.payload.bytes.size() >= cfg_.write_min;
  }

  // Receive path (verbs_recv.cpp), receiving thread.
  bool poll_recv_cq();
  WcUse consume(RecvWc& wc, RecvSink& sink, std::size_t max_frames, std::size_t* frames);
  WcUse on_frame_bytes(RecvWc& wc, RecvSink& sink, std::size_t max_frames, std::size_t* frames);
  WcUse on_write_header(RecvWc& wc, RecvSink& sink);
  WcUse on_write_data(RecvWc& wc, RecvSink& sink, std::size_t* frames);
  WcUse on_grant(const std::byte* data, std::size_t len);
  bool release(std::uint64_t buf);
  bool repost(std::uint64_t buf);
  void drain_comp_events();
  void keepalive();
  LinkStatus deliver_peer_hello(RecvSink& sink);
  std::byte* recv_buf(std::uint64_t i) {
    return srq_ ? srq_->buffer(i) : recv_mem_.get() + i * cfg_.buffer_size;
  }
  std::byte* send_buf(int i) {
    return send_mem_.get() + static_cast<std::size_t>(i) * peer_buffer_size_;
  }

  Config cfg_;
  std::string peer_;

  // Declared first, destroyed last: the QP, CQs and MRs below belong to
  // the device's PD, and the QP may be attached to its SRQ.
  struct Attachment {
    std::shared_ptr<DeviceContext> dev;
    std::shared_ptr<SharedRecvQueue> srq;
    std::uint32_t credits = 0;
    ~Attachment() {
      if (dev) dev->detach(srq, credits);
    }
  } attachment_;
  std::shared_ptr<DeviceContext>& dev_ = attachment_.dev;
  std::shared_ptr<SharedRecvQueue>& srq_ = attachment_.srq;

  EventChannelPtr channel_;
  CmIdPtr id_;
  CompChannelPtr comp_;
  CqPtr send_cq_, recv_cq_;
  QpGuard qp_;
  AlignedBytes recv_mem_, send_mem_;
  MrPtr recv_mr_, send_mr_;
  UniqueFd epfd_;
  UniqueFd busy_fd_;   // eventfd kept readable in busy-poll mode
  UniqueFd hello_fd_;  // eventfd readable while peer_hello_ waits for delivery
  std::uint32_t max_send_wr_ = 0;
  std::uint32_t max_inline_ = 0;

  mutable std::mutex send_mu_;
  bool started_ = false;
  std::uint32_t peer_buffer_size_ = 0;
  BufferCredits credits_{0, kMinBuffers};
  HeaderHook hook_;
  Queue sendq_;
  std::deque<PostedWr> posted_;                // in posting order (completions arrive in order)
  std::uint64_t wr_posted_ = 0, wr_done_ = 0;  // WR sequence numbers posted / completed
  std::vector<std::byte> scratch_;             // inline SENDs are assembled here
  std::vector<int> free_slots_;
  bool fin_wanted_ = false, fin_sent_ = false;
  bool disconnected_ = false;  // rdma_disconnect called or DISCONNECTED seen

  // Receive state (receiving thread only).
  FrameAssembler asm_;
  std::deque<RecvWc> rx_backlog_;
  bool peer_fin_ = false;
  std::optional<ConnectHello> peer_hello_;  // passive side: still to deliver
  bool hello_delivered_ = false;
  bool peer_disconnected_ = false;
  std::chrono::steady_clock::time_point last_rx_ = std::chrono::steady_clock::now();  // last WC
  std::chrono::steady_clock::time_point last_probe_ = last_rx_;
  bool await_write_ = false;         // granted a WRITE into asm_'s destination, waiting for it
  HeldRegistration write_dest_reg_;  // registration of that destination
  std::optional<WriteGrant> grant_to_send_;  // under send_mu_: posted before any data

  mutable std::mutex err_mu_;
  LinkError error_;
};

}  // namespace zipper::proto::verbs
