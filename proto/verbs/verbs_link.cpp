// VerbsLink lifecycle: resources at connect/accept, start, orderly and abrupt
// shutdown, RDMA CM events, errors, teardown. See verbs_link.h for the split.
#include "verbs_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "device.h"

namespace zipper::proto::verbs {
namespace {

constexpr int kPollBatch = 32;
constexpr auto kFinDrain = std::chrono::milliseconds(200);  // shutdown(): wait for FIN's completion

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

AlignedBytes alloc_aligned(std::size_t n) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, std::max<std::size_t>(n, 4096)) != 0)
    throw std::runtime_error("out of memory for verbs buffers (" + std::to_string(n) + " bytes)");
  return AlignedBytes(static_cast<std::byte*>(p));
}

void epoll_add_in(int epfd, int fd, const char* what) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) throw_errno(what);
}

}  // namespace

VerbsLink::VerbsLink(EventChannelPtr channel, CmIdPtr id, Config cfg, std::string peer)
    : cfg_(std::move(cfg)),
      peer_(std::move(peer)),
      channel_(std::move(channel)),
      id_(std::move(id)),
      asm_(peer_) {
  ibv_context* ctx = id_->verbs;
  if (ctx == nullptr)
    throw std::runtime_error("verbs link to " + peer_ + ": the RDMA CM id has no device");
  dev_ = DeviceContext::of(ctx);
  std::string srq_note;
  srq_ = dev_->attach(cfg_, &srq_note);
  attachment_.credits = srq_ ? cfg_.srq_credits : 0;
  // A link that should have shared the SRQ but could not keeps its own
  // receive queue; nothing else changes for it.
  comp_.reset(ibv_create_comp_channel(ctx));
  if (!comp_) throw_errno("ibv_create_comp_channel");
  set_nonblocking(comp_->fd);
  set_nonblocking(channel_->fd);

  max_send_wr_ = cfg_.send_slots + 16;  // slots plus inline, zero-copy and control SENDs
  send_cq_.reset(ibv_create_cq(ctx, static_cast<int>(max_send_wr_), nullptr, comp_.get(), 0));
  if (!send_cq_) throw_errno("ibv_create_cq (send)");
  recv_cq_.reset(ibv_create_cq(ctx, static_cast<int>(own_credits()), nullptr, comp_.get(), 0));
  if (!recv_cq_) throw_errno("ibv_create_cq (recv)");

  ibv_qp_init_attr qa{};
  qa.send_cq = send_cq_.get();
  qa.recv_cq = recv_cq_.get();
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = max_send_wr_;
  qa.cap.max_recv_wr = srq_ ? 0 : cfg_.recv_buffers;
  qa.srq = srq_ ? srq_->get() : nullptr;
  qa.cap.max_send_sge = 2;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = cfg_.inline_max;
  qa.sq_sig_all = 1;
  if (rdma_create_qp(id_.get(), dev_->pd(), &qa) != 0 && cfg_.inline_max > 0) {
    qa.cap.max_inline_data = 0;  // the device may support no inline data at all
    if (rdma_create_qp(id_.get(), dev_->pd(), &qa) != 0) throw_errno("rdma_create_qp (RC QP)");
  } else if (id_->qp == nullptr) {
    throw_errno("rdma_create_qp (RC QP)");
  }
  qp_ = QpGuard(id_.get());
  max_inline_ = qa.cap.max_inline_data;
  scratch_.resize(std::max<std::size_t>(max_inline_, 1));

  if (!srq_) {
    const std::size_t rbytes = std::size_t{cfg_.recv_buffers} * cfg_.buffer_size;
    recv_mem_ = alloc_aligned(rbytes);
    recv_mr_ = register_mr(dev_->pd(), recv_mem_.get(), rbytes, IBV_ACCESS_LOCAL_WRITE);
    if (!recv_mr_) throw_errno("ibv_reg_mr (receive buffers)");
    for (std::uint64_t i = 0; i < cfg_.recv_buffers; ++i)
      if (!repost(i)) throw std::runtime_error("verbs link to " + peer_ + ": " + error());
  }

  ibv_req_notify_cq(send_cq_.get(), 0);
  ibv_req_notify_cq(recv_cq_.get(), 0);

  epfd_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!epfd_) throw_errno("epoll_create1");
  epoll_add_in(epfd_.get(), comp_->fd, "epoll_ctl (completion channel)");
  epoll_add_in(epfd_.get(), channel_->fd, "epoll_ctl (RDMA CM channel)");
  if (cfg_.busy_poll) add_readable_eventfd(&busy_fd_, "eventfd (busy polling)");
}

VerbsLink::~VerbsLink() {
  {
    std::lock_guard lk(send_mu_);
    if (!disconnected_ && started_) rdma_disconnect(id_.get());
    disconnected_ = true;
    posted_.clear();
    sendq_.clear();
  }
  if (srq_) drain_srq_share();
  qp_.reset();  // before the CQs, MRs, SRQ and PD it uses
}

/// An eventfd that stays readable, added to the poll fd: keeps it readable
/// while the link has work that no completion will announce.
void VerbsLink::add_readable_eventfd(UniqueFd* fd, const char* what) {
  fd->reset(eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!*fd) throw_errno(what);
  epoll_add_in(epfd_.get(), fd->get(), what);
}

void VerbsLink::set_peer_hello(const ConnectHello& h) {
  peer_hello_ = h;
  // The client waits for the answer to its hello and sends nothing before:
  // keep poll_fd() readable until the hello has been delivered.
  add_readable_eventfd(&hello_fd_, "eventfd (hello)");
}

ConnParams VerbsLink::local_params(const ConnectHello* hello) const {
  ConnParams p{own_credits(), cfg_.buffer_size, std::nullopt};
  if (hello != nullptr && hello_fits(*hello)) p.hello = *hello;
  return p;
}

void VerbsLink::drain_srq_share() {
  // The SRQ outlives this QP: buffers it consumed (completions not yet
  // polled, or polled and not yet processed) go back into the SRQ for the
  // other links. Moving the QP to the error state first flushes a receive
  // in progress, so no buffer stays with a QP that is about to vanish.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  if (qp_.get() != nullptr) ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE);
  std::string why;
  for (const RecvWc& wc : rx_backlog_) srq_->repost(wc.buf, &why);
  rx_backlog_.clear();
  // After the peer's FIN nothing more can arrive (RC delivers in order and
  // FIN is its last SEND): one pass collects what is left. Otherwise a flush
  // may still be on its way; wait for it, briefly (this runs on zipperd's
  // receive thread, once per closed link).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  ibv_wc wcs[kPollBatch];
  for (;;) {
    const int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wcs);
    if (n < 0) break;
    if (n == 0) {
      if (peer_fin_ || std::chrono::steady_clock::now() >= until) break;
      std::this_thread::yield();
      continue;
    }
    for (int i = 0; i < n; ++i) srq_->repost(wcs[i].wr_id, &why);
  }
}

void VerbsLink::start(const ConnParams& peer) {
  std::lock_guard lk(send_mu_);
  peer_buffer_size_ = peer.buffer_size;
  credits_ = BufferCredits(peer.recv_buffers, own_credits());
  // Every SEND needs a credit, so slots beyond the peer's credits would
  // never be used.
  const std::uint32_t slots = std::min(cfg_.send_slots, peer.recv_buffers);
  const std::size_t sbytes = std::size_t{slots} * peer_buffer_size_;
  send_mem_ = alloc_aligned(sbytes);
  send_mr_ = register_mr(dev_->pd(), send_mem_.get(), sbytes, IBV_ACCESS_LOCAL_WRITE);
  if (!send_mr_) throw_errno("ibv_reg_mr (send slots)");
  for (int i = static_cast<int>(slots) - 1; i >= 0; --i) free_slots_.push_back(i);
  started_ = true;
}

void VerbsLink::set_header_hook(HeaderHook hook) {
  std::lock_guard lk(send_mu_);
  hook_ = std::move(hook);
}

void VerbsLink::shutdown_send() {
  {
    std::lock_guard lk(send_mu_);
    fin_wanted_ = true;
  }
  progress_send_internal();
}

void VerbsLink::shutdown() {
  std::vector<QueuedSend> done;
  {
    std::lock_guard lk(send_mu_);
    if (disconnected_) return;
    // An orderly end first (FIN after every frame already posted), so the peer
    // sees a clean close rather than a reset; bounded wait for its completion.
    fin_wanted_ = true;
    if (started_ && !failed()) {
      if (!fin_sent_ && sendq_.all_handed()) {
        LinkStatus st = LinkStatus::kOk;
        if (post_control_locked(SendKind::kFin, &st)) fin_sent_ = true;
      }
      const auto until = std::chrono::steady_clock::now() + kFinDrain;
      while (fin_sent_ && !posted_.empty() && !failed() &&
             std::chrono::steady_clock::now() < until) {
        if (reap_send_cq_locked(done) != LinkStatus::kOk) break;
        std::this_thread::yield();
      }
    }
    disconnected_ = true;
    rdma_disconnect(id_.get());  // flushes the QP; the CM event wakes any waiter
  }
  for (auto& p : done)
    if (p.frame.on_sent) p.frame.on_sent();
}

LinkStatus VerbsLink::drain_cm_events() {
  rdma_cm_event* ev = nullptr;
  while (rdma_get_cm_event(channel_.get(), &ev) == 0) {
    const rdma_cm_event_type type = ev->event;
    const int status = ev->status;
    rdma_ack_cm_event(ev);
    switch (type) {
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        peer_disconnected_ = true;
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        peer_disconnected_ = true;
        fail(LinkErrorKind::kTransport,
             "link " + peer_ + ": RDMA device removed (RDMA_CM_EVENT_DEVICE_REMOVAL)");
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        break;
      default:
        if (status != 0)
          fail(LinkErrorKind::kTransport, "link " + peer_ + ": " + rdma_event_str(type) +
                                              " (status " + std::to_string(status) + ")");
        break;
    }
  }
  if (peer_disconnected_) {
    std::lock_guard lk(send_mu_);
    if (!disconnected_) {
      disconnected_ = true;
      rdma_disconnect(id_.get());
    }
  }
  return LinkStatus::kOk;
}

LinkStatus VerbsLink::fail(LinkError e) {
  std::lock_guard lk(err_mu_);
  if (!error_) error_ = std::move(e);
  return LinkStatus::kError;
}

LinkStatus VerbsLink::fail_wc(const char* what, const ibv_wc& wc) {
  // Retries exhausted: the peer (or its QP) is gone and nobody answers.
  const bool timeout = wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR;
  return fail(timeout ? LinkErrorKind::kTimeout : LinkErrorKind::kTransport,
              wc_error_text((std::string(what) + " " + peer_ + ":").c_str(), wc));
}

bool VerbsLink::failed() const {
  std::lock_guard lk(err_mu_);
  return static_cast<bool>(error_);
}

LinkError VerbsLink::last_error() const {
  std::lock_guard lk(err_mu_);
  return error_;
}

}  // namespace zipper::proto::verbs
