#include "verbs_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

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

std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::runtime_error(errno_text(what.c_str(), errno));
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

/// An eventfd that stays readable, added to `epfd`: keeps a link's poll fd
/// readable while it has work that no completion will announce.
int add_readable_eventfd(int epfd, const char* what) {
  const int fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (fd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    errno = err;
    throw_errno(what);
  }
  return fd;
}

}  // namespace

VerbsLink::VerbsLink(EventChannelPtr channel, CmIdPtr id, Config cfg, std::string peer)
    : cfg_(std::move(cfg)),
      peer_(std::move(peer)),
      channel_(std::move(channel)),
      id_(std::move(id)) {
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
    recv_mr_.reset(ibv_reg_mr(dev_->pd(), recv_mem_.get(), rbytes, IBV_ACCESS_LOCAL_WRITE));
    if (!recv_mr_) throw_errno("ibv_reg_mr (receive buffers)");
    for (std::uint64_t i = 0; i < cfg_.recv_buffers; ++i)
      if (!repost(i)) throw std::runtime_error("verbs link to " + peer_ + ": " + error());
  }

  ibv_req_notify_cq(send_cq_.get(), 0);
  ibv_req_notify_cq(recv_cq_.get(), 0);

  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) throw_errno("epoll_create1");
  for (int fd : {comp_->fd, channel_->fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) throw_errno("epoll_ctl");
  }
  if (cfg_.busy_poll) busy_fd_ = add_readable_eventfd(epfd_, "eventfd (busy polling)");
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
  if (epfd_ >= 0) ::close(epfd_);
  if (busy_fd_ >= 0) ::close(busy_fd_);
  if (hello_fd_ >= 0) ::close(hello_fd_);
}

void VerbsLink::set_peer_hello(const ConnectHello& h) {
  peer_hello_ = h;
  // The client waits for the answer to its hello and sends nothing before:
  // keep poll_fd() readable until the hello has been delivered.
  hello_fd_ = add_readable_eventfd(epfd_, "eventfd (hello)");
}

ConnParams VerbsLink::local_params(const ConnectHello* hello) const {
  ConnParams p{own_credits(), cfg_.buffer_size, std::nullopt};
  if (hello != nullptr) p.hello = *hello;
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
  credits_ = CreditAccount(peer.recv_buffers, own_credits());
  // Every SEND needs a credit, so slots beyond the peer's credits would
  // never be used.
  const std::uint32_t slots = std::min(cfg_.send_slots, peer.recv_buffers);
  const std::size_t sbytes = std::size_t{slots} * peer_buffer_size_;
  send_mem_ = alloc_aligned(sbytes);
  send_mr_.reset(ibv_reg_mr(dev_->pd(), send_mem_.get(), sbytes, IBV_ACCESS_LOCAL_WRITE));
  if (!send_mr_) throw_errno("ibv_reg_mr (send slots)");
  for (int i = static_cast<int>(slots) - 1; i >= 0; --i) free_slots_.push_back(i);
  started_ = true;
}

void VerbsLink::set_header_hook(HeaderHook hook) {
  std::lock_guard lk(send_mu_);
  hook_ = std::move(hook);
}

LinkStatus VerbsLink::fail(std::string why) {
  std::lock_guard lk(err_mu_);
  if (error_.empty()) error_ = std::move(why);
  return LinkStatus::kError;
}

bool VerbsLink::failed() const {
  std::lock_guard lk(err_mu_);
  return !error_.empty();
}

std::string VerbsLink::error() const {
  std::lock_guard lk(err_mu_);
  return error_;
}

bool VerbsLink::repost(std::uint64_t buf) {
  if (srq_) {
    std::string why;
    if (!srq_->repost(buf, &why)) {
      fail(why);
      return false;
    }
    return true;
  }
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(recv_buf(buf));
  sge.length = cfg_.buffer_size;
  sge.lkey = recv_mr_->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = buf;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (const int rc = ibv_post_recv(qp_.get(), &wr, &bad); rc != 0) {
    fail(errno_text("ibv_post_recv", rc));
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- sending

void VerbsLink::post(OutFrame frame) {
  frame.hdr.payload_len = static_cast<std::uint32_t>(frame.payload.bytes.size());
  std::lock_guard lk(send_mu_);
  queued_bytes_ += kHeaderSize + frame.payload.bytes.size();
  Pending p;
  const bool urgent = frame.urgent;
  p.frame = std::move(frame);
  if (!urgent) {
    sendq_.push_back(std::move(p));
    return;
  }
  // Urgent control frames (returned credit) overtake frames not yet started,
  // staying in order among themselves. A frame's bytes are never interleaved.
  auto at = sendq_.end();
  while (at != sendq_.begin()) {
    const Pending& q = *std::prev(at);
    if (q.posted > 0 || q.encoded || q.frame.urgent) break;
    --at;
  }
  sendq_.insert(at, std::move(p));
}

bool VerbsLink::send_pending() const {
  std::lock_guard lk(send_mu_);
  return !sendq_.empty();
}

std::size_t VerbsLink::send_queued_bytes() const {
  std::lock_guard lk(send_mu_);
  return queued_bytes_;
}

LinkStatus VerbsLink::progress_send() { return progress_send_internal(); }

LinkStatus VerbsLink::progress_send_internal() {
  std::vector<Pending> done;
  LinkStatus st;
  {
    std::lock_guard lk(send_mu_);
    st = send_locked(done);
  }
  // Callbacks and payload owners run unlocked: they may post to other links.
  for (auto& p : done)
    if (p.frame.on_sent) p.frame.on_sent();
  return st;
}

LinkStatus VerbsLink::reap_send_cq_locked(std::vector<Pending>& done) {
  ibv_wc wcs[kPollBatch];
  for (;;) {
    const int n = ibv_poll_cq(send_cq_.get(), kPollBatch, wcs);
    if (n < 0) return fail("ibv_poll_cq (send CQ) failed");
    for (int i = 0; i < n; ++i) {
      if (posted_.empty()) return fail("send CQ: completion without a posted WR");
      const PostedWr w = posted_.front();
      posted_.pop_front();
      ++wr_done_;  // an RC send queue completes in posting order
      if (w.slot >= 0) free_slots_.push_back(w.slot);
      if (wcs[i].status != IBV_WC_SUCCESS) {
        if (wcs[i].status == IBV_WC_WR_FLUSH_ERR && disconnected_) continue;
        return fail(wc_error_text(("send to " + peer_ + ":").c_str(), wcs[i]));
      }
    }
    if (n < kPollBatch) break;
  }
  while (!sendq_.empty()) {
    Pending& p = sendq_.front();
    if (!p.sent() || (p.zero_copy && p.last_wr > wr_done_)) break;
    done.push_back(std::move(p));
    sendq_.pop_front();
  }
  return LinkStatus::kOk;
}

bool VerbsLink::post_control_locked(SendKind kind, LinkStatus* st) {
  if (posted_.size() >= max_send_wr_ || credits_.credits() == 0) return false;
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(encode_imm(kind, credits_.on_send()));
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.num_sge = 0;
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) {
    *st = fail(errno_text("ibv_post_send", rc));
    return false;
  }
  posted_.push_back(PostedWr{-1});
  ++wr_posted_;
  return true;
}

bool VerbsLink::encode_locked(Pending& p) {
  if (p.encoded) return p.posted < p.total();
  p.encoded = true;
  if (hook_ && !hook_(p.frame.hdr)) {
    // Dropped by the hook: counts as sent, completes once it reaches the head.
    queued_bytes_ -= p.total();
    p.posted = p.total();
    return false;
  }
  encode_header(p.frame.hdr, p.wire);
  return true;
}

bool VerbsLink::post_data_locked(LinkStatus* st) {
  auto it = sendq_.begin();
  while (it != sendq_.end() && !encode_locked(*it)) ++it;
  if (it == sendq_.end()) return false;
  if (posted_.size() >= max_send_wr_ || !credits_.can_send_data()) return false;
  Pending& head = *it;
  if (by_write(head)) {
    if (head.posted == 0) {
      // Announce the frame; its payload follows by RDMA WRITE once granted.
      if (!post_small_locked(SendKind::kWriteHeader, head.wire.data(), kHeaderSize, st))
        return false;
      head.posted = kHeaderSize;
      head.last_wr = wr_posted_;
      head.write = Pending::Write::kAwaitGrant;
      queued_bytes_ -= kHeaderSize;
      return true;
    }
    // Frames behind it wait: the receiver takes frames strictly in order.
    if (head.write == Pending::Write::kAwaitGrant) return false;
    return post_write_locked(head, st);
  }
  const std::size_t cap = peer_buffer_size_;
  ibv_sge sge{};
  int slot = -1;
  unsigned flags = IBV_SEND_SIGNALED;
  const SendKind kind = head.posted == 0 ? SendKind::kFrameStart : SendKind::kFrameCont;
  struct Part {
    Pending* p;
    std::size_t take;
  };
  Part parts[16];
  int nparts = 0;
  std::size_t bytes = 0;

  const std::size_t plen = head.frame.payload.bytes.size();
  if (head.posted >= kHeaderSize && cfg_.zcopy_min > 0 && plen >= cfg_.zcopy_min &&
      head.frame.payload.owner) {
    std::string why;
    if (!head.mr)
      head.mr = dev_->cached_registration(head.frame.payload.bytes.data(), plen,
                                          head.frame.payload.owner, &why);
    if (head.mr) {
      // Zero copy: straight from the payload's cached registration.
      const std::size_t poff = head.posted - kHeaderSize;
      const std::size_t take = std::min(plen - poff, cap);
      sge = {reinterpret_cast<std::uintptr_t>(head.frame.payload.bytes.data() + poff),
             static_cast<std::uint32_t>(take), head.mr->lkey};
      parts[nparts++] = {&head, take};
      bytes = take;
      head.zero_copy = true;
    }
  }
  if (nparts == 0) {
    // Pack: the rest of the head frame and as many following frames as fit.
    // A frame header never straddles two SENDs.
    for (auto q = it; q != sendq_.end() && nparts < 16 && bytes < cap; ++q) {
      if (!encode_locked(*q)) continue;
      if (q != it && by_write(*q)) break;
      if (q->posted == 0 && cap - bytes < kHeaderSize) break;
      const std::size_t take = std::min(q->total() - q->posted, cap - bytes);
      parts[nparts++] = {&*q, take};
      bytes += take;
      if (q->posted + take < q->total()) break;
    }
    std::byte* dst = nullptr;
    if (bytes <= max_inline_) {
      dst = scratch_.data();  // copied by the HCA at post time: no lkey, no slot
      flags |= IBV_SEND_INLINE;
    } else {
      if (free_slots_.empty()) return false;
      slot = free_slots_.back();
      free_slots_.pop_back();
      dst = send_buf(slot);
    }
    std::size_t at = 0;
    for (int i = 0; i < nparts; ++i) {
      const Pending& q = *parts[i].p;
      std::size_t from = q.posted, left = parts[i].take;
      if (from < kHeaderSize) {
        const std::size_t h = std::min(kHeaderSize - from, left);
        std::memcpy(dst + at, q.wire.data() + from, h);
        at += h;
        from += h;
        left -= h;
      }
      if (left > 0) {
        std::memcpy(dst + at, q.frame.payload.bytes.data() + (from - kHeaderSize), left);
        at += left;
      }
    }
    sge = {reinterpret_cast<std::uintptr_t>(dst), static_cast<std::uint32_t>(bytes),
           slot >= 0 ? send_mr_->lkey : 0};
  }
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = flags;
  const std::uint32_t returned = credits_.on_send();
  wr.imm_data = htonl(encode_imm(kind, returned));
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) {
    if (slot >= 0) free_slots_.push_back(slot);
    *st = fail(errno_text("ibv_post_send", rc));
    return false;
  }
  posted_.push_back(PostedWr{slot});
  ++wr_posted_;
  for (int i = 0; i < nparts; ++i) {
    parts[i].p->posted += parts[i].take;
    parts[i].p->last_wr = wr_posted_;
  }
  queued_bytes_ -= bytes;
  return true;
}

bool VerbsLink::post_small_locked(SendKind kind, const std::byte* bytes, std::size_t len,
                                  LinkStatus* st) {
  if (posted_.size() >= max_send_wr_ || !credits_.can_send_data()) return false;
  ibv_sge sge{};
  int slot = -1;
  unsigned flags = IBV_SEND_SIGNALED;
  if (len <= max_inline_) {
    sge = {reinterpret_cast<std::uintptr_t>(bytes), static_cast<std::uint32_t>(len), 0};
    flags |= IBV_SEND_INLINE;
  } else {
    if (free_slots_.empty()) return false;
    slot = free_slots_.back();
    free_slots_.pop_back();
    std::memcpy(send_buf(slot), bytes, len);
    sge = {reinterpret_cast<std::uintptr_t>(send_buf(slot)), static_cast<std::uint32_t>(len),
           send_mr_->lkey};
  }
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = flags;
  wr.imm_data = htonl(encode_imm(kind, credits_.on_send()));
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) {
    if (slot >= 0) free_slots_.push_back(slot);
    *st = fail(errno_text("ibv_post_send", rc));
    return false;
  }
  posted_.push_back(PostedWr{slot});
  ++wr_posted_;
  return true;
}

std::optional<Registration> VerbsLink::register_payload(const Payload& p, MrCache::Handle* cached,
                                                        MrPtr* own, bool remote_write,
                                                        std::string* why) {
  if (*cached) return **cached;
  if (*own) return Registration{(*own)->lkey, (*own)->rkey, own->get()};
  if (p.owner && !remote_write) {
    *cached = dev_->cached_registration(p.bytes.data(), p.bytes.size(), p.owner, why);
    if (*cached) return **cached;
  }
  // Memory whose lifetime the link cannot see, or an RDMA WRITE destination
  // (remote access must end with the frame): registered for this frame only.
  own->reset(ibv_reg_mr(dev_->pd(), p.bytes.data(), p.bytes.size(),
                        IBV_ACCESS_LOCAL_WRITE | (remote_write ? IBV_ACCESS_REMOTE_WRITE : 0)));
  if (!*own) {
    *why = errno_text("ibv_reg_mr", errno);
    return std::nullopt;
  }
  return Registration{(*own)->lkey, (*own)->rkey, own->get()};
}

bool VerbsLink::post_write_locked(Pending& p, LinkStatus* st) {
  if (posted_.size() >= max_send_wr_ || !credits_.can_send_data()) return false;
  const std::size_t plen = p.frame.payload.bytes.size();
  if (p.grant.len != plen) {
    *st = fail("link " + peer_ + ": RDMA WRITE grant for " + std::to_string(p.grant.len) +
               " bytes, frame payload is " + std::to_string(plen));
    return false;
  }
  std::string why;
  const auto reg = register_payload(p.frame.payload, &p.mr, &p.own_mr, false, &why);
  if (!reg) {
    *st = fail("link " + peer_ + ": cannot register a payload for RDMA WRITE: " + why);
    return false;
  }
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.frame.payload.bytes.data()),
              static_cast<std::uint32_t>(plen), reg->lkey};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(encode_imm(SendKind::kWriteData, credits_.on_send()));
  wr.wr.rdma.remote_addr = p.grant.addr;
  wr.wr.rdma.rkey = p.grant.rkey;
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) {
    *st = fail(errno_text("ibv_post_send (RDMA WRITE)", rc));
    return false;
  }
  posted_.push_back(PostedWr{-1});
  ++wr_posted_;
  p.posted = p.total();
  p.last_wr = wr_posted_;
  p.zero_copy = true;
  queued_bytes_ -= plen;
  return true;
}

LinkStatus VerbsLink::send_locked(std::vector<Pending>& done) {
  if (!started_ || disconnected_) return failed() ? LinkStatus::kError : LinkStatus::kOk;
  if (failed()) return LinkStatus::kError;
  LinkStatus st = reap_send_cq_locked(done);
  if (st != LinkStatus::kOk) return st;
  if (grant_to_send_) {
    const auto g = encode_grant(*grant_to_send_);
    if (post_small_locked(SendKind::kWriteGrant, g.data(), g.size(), &st)) grant_to_send_.reset();
    if (st != LinkStatus::kOk) return st;
  }
  while (post_data_locked(&st)) {
  }
  if (st != LinkStatus::kOk) return st;
  if (credits_.credit_message_due() && !post_control_locked(SendKind::kCredit, &st) &&
      st != LinkStatus::kOk)
    return st;
  bool all_posted = true;
  for (const Pending& p : sendq_) all_posted = all_posted && p.encoded && p.posted == p.total();
  if (fin_wanted_ && !fin_sent_ && all_posted) {
    if (post_control_locked(SendKind::kFin, &st)) fin_sent_ = true;
    if (st != LinkStatus::kOk) return st;
  }
  // Frames already complete (e.g. dropped by the hook).
  while (!sendq_.empty()) {
    Pending& p = sendq_.front();
    if (!p.sent() || (p.zero_copy && p.last_wr > wr_done_)) break;
    done.push_back(std::move(p));
    sendq_.pop_front();
  }
  return LinkStatus::kOk;
}

void VerbsLink::shutdown_send() {
  {
    std::lock_guard lk(send_mu_);
    fin_wanted_ = true;
  }
  progress_send_internal();
}

void VerbsLink::shutdown() {
  std::vector<Pending> done;
  {
    std::lock_guard lk(send_mu_);
    if (disconnected_) return;
    // An orderly end first (FIN after every frame already posted), so the peer
    // sees a clean close rather than a reset; bounded wait for its completion.
    fin_wanted_ = true;
    if (started_ && !failed()) {
      bool all_posted = true;
      for (const Pending& p : sendq_) all_posted = all_posted && p.encoded && p.posted == p.total();
      if (!fin_sent_ && all_posted) {
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

// ---------------------------------------------------------------- receiving

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
        fail("link " + peer_ + ": RDMA device removed (RDMA_CM_EVENT_DEVICE_REMOVAL)");
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        break;
      default:
        if (status != 0)
          fail("link " + peer_ + ": " + rdma_event_str(type) + " (status " +
               std::to_string(status) + ")");
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

void VerbsLink::drain_comp_events() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(comp_.get(), &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
  ibv_req_notify_cq(send_cq_.get(), 0);
  ibv_req_notify_cq(recv_cq_.get(), 0);
  epoll_event evs[4];
  (void)epoll_wait(epfd_, evs, 4,
                   0);  // consume the inner ready list (nested epoll)
}

LinkStatus VerbsLink::on_write_header(RecvSink& sink, const std::byte* data, std::size_t len,
                                      bool* paused) {
  FrameHeader h;
  const auto dec = decode_header(std::span<const std::byte>(data, len), max_payload_, &h);
  if (dec != DecodeError::kOk)
    return fail("malformed frame from " + peer_ + ": " + std::string(to_string(dec)));
  auto d = sink.payload_dest(h);
  if (!d) {
    *paused = true;
    return LinkStatus::kOk;
  }
  if (d->bytes.size() != h.payload_len) return fail("internal: payload buffer size mismatch");
  std::string why;
  const auto reg = register_payload(*d, &write_mr_, &write_own_mr_, true, &why);
  if (!reg) return fail("link " + peer_ + ": cannot register the RDMA WRITE destination: " + why);
  rhdr_ = h;
  rdest_ = std::move(d);
  await_write_ = true;
  std::lock_guard lk(send_mu_);
  grant_to_send_ =
      WriteGrant{reinterpret_cast<std::uintptr_t>(rdest_->bytes.data()), reg->rkey, h.payload_len};
  return LinkStatus::kOk;
}

LinkStatus VerbsLink::deliver_peer_hello(RecvSink& sink) {
  FrameHeader h;
  h.type = FrameType::kHello;
  h.job_id = peer_hello_->job_id;
  h.src = peer_hello_->vrank;
  h.payload_len = static_cast<std::uint32_t>(kHelloFixedSize);
  auto d = sink.payload_dest(h);
  if (!d) return LinkStatus::kPaused;
  if (d->bytes.size() != kHelloFixedSize) return fail("internal: payload buffer size mismatch");
  encode_hello({peer_hello_->vrank, peer_hello_->np_low, peer_hello_->np_high, 0},
               d->bytes.first<kHelloFixedSize>());
  peer_hello_.reset();
  epoll_ctl(epfd_, EPOLL_CTL_DEL, hello_fd_, nullptr);
  ::close(hello_fd_);
  hello_fd_ = -1;
  sink.on_frame(h, std::move(*d));
  return LinkStatus::kOk;
}

LinkStatus VerbsLink::progress_recv(RecvSink& sink, std::size_t max_frames) {
  drain_cm_events();
  drain_comp_events();
  // The hello came with the connect request: it is the connection's first
  // frame, ahead of anything the client sent afterwards.
  if (peer_hello_) {
    if (const LinkStatus st = deliver_peer_hello(sink); st != LinkStatus::kOk) return st;
  }
  std::size_t frames = 0;
  const auto spin_until =
      std::chrono::steady_clock::now() + std::chrono::microseconds(cfg_.spin_us);
  bool got_any = false;
  LinkStatus result = LinkStatus::kOk;
  for (;;) {
    if (failed()) return LinkStatus::kError;
    if (rx_backlog_.empty()) {
      ibv_wc wcs[kPollBatch];
      const int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wcs);
      if (n < 0) return fail("ibv_poll_cq (receive CQ) failed");
      for (int i = 0; i < n; ++i) {
        if (wcs[i].status != IBV_WC_SUCCESS) {
          if (wcs[i].status == IBV_WC_WR_FLUSH_ERR && (peer_disconnected_ || disconnected_))
            continue;
          return fail(wc_error_text(("receive from " + peer_ + ":").c_str(), wcs[i]));
        }
        if ((wcs[i].wc_flags & IBV_WC_WITH_IMM) == 0)
          return fail("malformed SEND from " + peer_ + ": no immediate data");
        rx_backlog_.push_back(RecvWc{wcs[i].wr_id, wcs[i].byte_len, ntohl(wcs[i].imm_data)});
        last_rx_ = std::chrono::steady_clock::now();
      }
      if (rx_backlog_.empty()) {
        // Adaptive polling: spin briefly on an idle link before the caller
        // sleeps.
        if (!got_any && cfg_.spin_us > 0 && !peer_disconnected_ && !peer_fin_ &&
            std::chrono::steady_clock::now() < spin_until) {
          progress_send_internal();
          continue;
        }
        break;
      }
    }
    got_any = true;
    RecvWc& wc = rx_backlog_.front();
    if (!wc.credits_taken) {
      std::lock_guard lk(send_mu_);
      if (!credits_.on_returned(imm_credits(wc.imm)))
        return fail("link " + peer_ + ": the peer returned more credits than it owed");
      wc.credits_taken = true;
    }
    const std::byte* data = recv_buf(wc.buf) + wc.off;
    std::size_t left = wc.len - wc.off;
    bool stop = false;
    switch (imm_kind(wc.imm)) {
      case SendKind::kFrameStart:
      case SendKind::kFrameCont: {
        if (await_write_)
          return fail("malformed frame from " + peer_ + ": frame data while an RDMA WRITE is due");
        if (wc.off == 0 && (imm_kind(wc.imm) == SendKind::kFrameCont) != have_header_)
          return fail("malformed frame from " + peer_ +
                      (have_header_ ? ": new frame inside a frame" : ": payload outside a frame"));
        // The SEND carries the rest of the current frame, then whole frames,
        // then possibly the start of one more (a header never straddles SENDs).
        for (;;) {
          if (!have_header_) {
            if (left == 0) break;
            if (left < kHeaderSize)
              return fail("malformed frame from " + peer_ + ": partial header in a SEND");
            FrameHeader h;
            const auto dec =
                decode_header(std::span<const std::byte>(data, kHeaderSize), max_payload_, &h);
            if (dec != DecodeError::kOk)
              return fail("malformed frame from " + peer_ + ": " + std::string(to_string(dec)));
            auto d = sink.payload_dest(h);
            if (!d) {
              result = LinkStatus::kPaused;  // resume at this header; the buffer stays held
              wc.off = static_cast<std::uint32_t>(wc.len - left);
              goto out;
            }
            if (d->bytes.size() != h.payload_len)
              return fail("internal: payload buffer size mismatch");
            rdest_ = std::move(d);
            rhdr_ = h;
            have_header_ = true;
            rgot_ = 0;
            data += kHeaderSize;
            left -= kHeaderSize;
          }
          const std::size_t n = std::min(left, rhdr_.payload_len - rgot_);
          if (n > 0) std::memcpy(rdest_->bytes.data() + rgot_, data, n);
          rgot_ += n;
          data += n;
          left -= n;
          if (rgot_ < rhdr_.payload_len) break;  // continues in the next SEND
          have_header_ = false;
          Payload p = std::move(*rdest_);
          rdest_.reset();
          sink.on_frame(rhdr_, std::move(p));
          if (max_frames != 0 && ++frames >= max_frames && left > 0) {
            wc.off = static_cast<std::uint32_t>(wc.len - left);
            stop = true;
            break;
          }
        }
        break;
      }
      case SendKind::kWriteHeader: {
        if (wc.off != 0 || have_header_ || await_write_ || left != kHeaderSize)
          return fail("malformed frame from " + peer_ + ": unexpected RDMA WRITE announcement");
        bool paused = false;
        if (on_write_header(sink, data, left, &paused) != LinkStatus::kOk)
          return LinkStatus::kError;
        if (paused) {
          result = LinkStatus::kPaused;  // asked again later; the buffer stays held
          goto out;
        }
        break;
      }
      case SendKind::kWriteData: {
        if (!await_write_ || wc.len != rhdr_.payload_len)
          return fail("malformed frame from " + peer_ + ": unexpected RDMA WRITE of " +
                      std::to_string(wc.len) + " bytes");
        await_write_ = false;
        write_mr_.reset();
        write_own_mr_.reset();
        Payload p = std::move(*rdest_);
        rdest_.reset();
        sink.on_frame(rhdr_, std::move(p));
        ++frames;
        break;
      }
      case SendKind::kWriteGrant: {
        if (left != kWriteGrantSize) return fail("malformed RDMA WRITE grant from " + peer_);
        const WriteGrant g = decode_grant(data);
        std::lock_guard lk(send_mu_);
        Pending* target = nullptr;
        for (Pending& p : sendq_)
          if (p.write == Pending::Write::kAwaitGrant) {
            target = &p;
            break;
          }
        if (target == nullptr) return fail("link " + peer_ + ": RDMA WRITE grant for no frame");
        target->grant = g;
        target->write = Pending::Write::kGranted;
        break;
      }
      case SendKind::kCredit:
        if (left != 0) return fail("malformed credit message from " + peer_);
        break;
      case SendKind::kFin:
        peer_fin_ = true;
        break;
      default:
        return fail("malformed SEND from " + peer_ + ": unknown kind");
    }
    if (stop) break;
    {
      const std::uint64_t buf = wc.buf;
      rx_backlog_.pop_front();
      if (!repost(buf)) return LinkStatus::kError;
      std::lock_guard lk(send_mu_);
      credits_.on_reposted();
    }
    if (max_frames != 0 && frames >= max_frames) break;
  }
out:
  if (cfg_.keepalive_ms > 0 && !peer_disconnected_ && !peer_fin_) {
    // An idle receiver cannot tell a quiet peer from a dead one (its QP may be
    // gone without a DREQ reaching us): probe with a credit SEND, which fails
    // with a transport retry error if nobody acknowledges it.
    const auto now = std::chrono::steady_clock::now();
    const auto idle = std::chrono::milliseconds(cfg_.keepalive_ms);
    if (now - last_rx_ >= idle && now - last_probe_ >= idle) {
      last_probe_ = now;
      std::lock_guard lk(send_mu_);
      LinkStatus st = LinkStatus::kOk;
      if (started_ && !disconnected_ && posted_.empty())
        post_control_locked(SendKind::kCredit, &st);
    }
  }
  // Returned credits and freed send slots may unblock sends; owed credits may
  // be due back (completion channels never signal writability).
  if (progress_send_internal() == LinkStatus::kError) return LinkStatus::kError;
  if (result == LinkStatus::kPaused) return result;
  if (rx_backlog_.empty() && (peer_fin_ || peer_disconnected_)) {
    if (have_header_) return fail("connection closed by " + peer_ + " in the middle of a frame");
    if (failed()) return LinkStatus::kError;
    return LinkStatus::kClosed;
  }
  return LinkStatus::kOk;
}

}  // namespace zipper::proto::verbs
