// Verbs backend of the link interface: one RC QP per connection, set up with
// RDMA CM. Frames travel as SEND_WITH_IMM into receive buffers the peer
// pre-posted (eager; frames larger than a buffer are split into consecutive
// SENDs), guarded by receive credits (credits.h), so receiver-not-ready never
// happens. The receive buffers are the QP's own, or a share of the device's
// SRQ once the device carries more than ZIPPER_VERBS_SRQ_THRESHOLD links
// (srq.h); PD and MR cache are the device's (device_context.h). Tiny SENDs go inline; large
// payloads that have a lifetime owner are sent from a registration out of the MR cache (mr_cache.h)
// instead of being copied into a send slot. See docs/verbs.md.
//
// poll_fd() is an epoll fd holding the CQs' completion channel and the
// connection's RDMA CM event channel: it turns readable on a completion
// (send or receive) and on a CM event (disconnect). progress_recv() drains
// both and also advances blocked sends (credits returned, send slots freed),
// since completion channels never signal POLLOUT: a caller that waits for
// POLLOUT on poll_fd() never gets it, and needs none (every event that can
// unblock a send, a send completion or returned credit, is a completion that
// wakes a receive wait).
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "../link.h"
#include "config.h"
#include "credits.h"
#include "device_context.h"
#include "mr_cache.h"
#include "raii.h"
#include "srq.h"
#include "wire.h"

namespace zipper::proto::verbs {

class VerbsLink final : public Link {
 public:
  /// Takes over a cm_id whose route is resolved (active side) or that came in
  /// with a connect request (passive side), with its own event channel.
  /// Creates PD, completion channel, CQs, QP and MRs and pre-posts the
  /// receive buffers. Throws std::runtime_error on failure.
  VerbsLink(EventChannelPtr channel, CmIdPtr id, Config cfg, std::string peer);
  ~VerbsLink() override;

  /// The peer's receive buffers (from the CM private data): starts sending.
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

  int poll_fd() const override { return epfd_; }
  void post(OutFrame frame) override;
  LinkStatus progress_send() override;
  bool send_pending() const override;
  std::size_t send_queued_bytes() const override;
  LinkStatus progress_recv(RecvSink& sink, std::size_t max_frames) override;
  void set_max_payload(std::uint32_t bytes) override { max_payload_ = bytes; }
  void set_header_hook(HeaderHook hook) override;
  void shutdown() override;
  void shutdown_send() override;
  std::string error() const override;
  std::string peer() const override { return peer_; }

 private:
  struct Pending {
    OutFrame frame;
    std::array<std::byte, kHeaderSize> wire{};
    bool encoded = false;
    std::size_t posted = 0;     // bytes of header+payload already in posted WRs
    std::uint64_t last_wr = 0;  // sequence number of the last WR carrying its bytes
    MrCache::Handle mr;         // zero-copy registration of the payload, if any
    // RDMA WRITE path: header SEND, then (after the peer's grant) the WRITE.
    enum class Write : std::uint8_t { kNo, kAwaitGrant, kGranted } write = Write::kNo;
    WriteGrant grant;
    MrPtr own_mr;  // one-off registration of a payload without owner
    // Some payload bytes were posted from the payload itself (zero copy or
    // RDMA WRITE): the frame is sent only once those WRs complete. Otherwise
    // every byte was copied (inline or send slot) and the frame counts as
    // sent when posted, like a TCP write into the socket buffer.
    bool zero_copy = false;
    bool sent() const { return encoded && posted == total(); }
    std::size_t total() const { return kHeaderSize + frame.payload.bytes.size(); }
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

  LinkStatus fail(std::string why);
  bool failed() const;
  // Send side; all with send_mu_ held. `done` collects finished frames whose
  // callbacks run after unlocking.
  LinkStatus send_locked(std::vector<Pending>& done);
  LinkStatus reap_send_cq_locked(std::vector<Pending>& done);
  bool encode_locked(Pending& p);
  bool post_data_locked(LinkStatus* st);
  bool post_control_locked(SendKind kind, LinkStatus* st);
  bool post_write_locked(Pending& p, LinkStatus* st);
  bool post_small_locked(SendKind kind, const std::byte* bytes, std::size_t len, LinkStatus* st);
  bool by_write(const Pending& p) const {
    return cfg_.write_min > 0 && p.frame.payload.bytes.size() >= cfg_.write_min;
  }
  LinkStatus on_write_header(RecvSink& sink, const std::byte* data, std::size_t len, bool* paused);
  /// Registers `p` for the data path: from the MR cache (local access) when
  /// it has an owner, else for this frame only into *own; remote_write
  /// (RDMA WRITE destinations) always registers for this frame only. Nullopt
  /// with *why on failure.
  std::optional<Registration> register_payload(const Payload& p, MrCache::Handle* cached,
                                               MrPtr* own, bool remote_write, std::string* why);
  LinkStatus progress_send_internal();
  // Receive side (the receiving thread).
  LinkStatus drain_cm_events();
  void drain_comp_events();
  bool repost(std::uint64_t buf);
  std::byte* recv_buf(std::uint64_t i) {
    return srq_ ? srq_->buffer(i) : recv_mem_.get() + i * cfg_.buffer_size;
  }
  LinkStatus deliver_peer_hello(RecvSink& sink);
  void drain_srq_share();
  std::byte* send_buf(int i) {
    return send_mem_.get() + static_cast<std::size_t>(i) * peer_buffer_size_;
  }

  Config cfg_;
  std::string peer_;
  std::uint32_t max_payload_ = kMaxPayloadLimit;

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
  int epfd_ = -1;
  int busy_fd_ = -1;   // eventfd kept readable in busy-poll mode
  int hello_fd_ = -1;  // eventfd readable while peer_hello_ waits for delivery
  std::uint32_t max_send_wr_ = 0;
  std::uint32_t max_inline_ = 0;

  mutable std::mutex send_mu_;
  bool started_ = false;
  std::uint32_t peer_buffer_size_ = 0;
  CreditAccount credits_{0, kMinBuffers};
  HeaderHook hook_;
  std::deque<Pending> sendq_;
  std::size_t queued_bytes_ = 0;
  std::deque<PostedWr> posted_;                // in posting order (completions arrive in order)
  std::uint64_t wr_posted_ = 0, wr_done_ = 0;  // WR sequence numbers posted / completed
  std::vector<std::byte> scratch_;             // inline SENDs are assembled here
  std::vector<int> free_slots_;
  bool fin_wanted_ = false, fin_sent_ = false;
  bool disconnected_ = false;  // rdma_disconnect called or DISCONNECTED seen

  // Receive state (receiving thread only).
  std::deque<RecvWc> rx_backlog_;
  bool have_header_ = false;
  FrameHeader rhdr_;
  std::optional<Payload> rdest_;
  std::size_t rgot_ = 0;
  bool peer_fin_ = false;
  std::optional<ConnectHello> peer_hello_;  // passive side: still to deliver
  bool hello_delivered_ = false;
  bool peer_disconnected_ = false;
  std::chrono::steady_clock::time_point last_rx_ = std::chrono::steady_clock::now();  // last WC
  std::chrono::steady_clock::time_point last_probe_ = last_rx_;
  bool await_write_ = false;  // granted a WRITE for rhdr_/rdest_, waiting for its data
  MrCache::Handle write_mr_;  // registration of rdest_ for that WRITE
  MrPtr write_own_mr_;
  std::optional<WriteGrant> grant_to_send_;  // under send_mu_: posted before any data

  mutable std::mutex err_mu_;
  std::string error_;
};

}  // namespace zipper::proto::verbs
