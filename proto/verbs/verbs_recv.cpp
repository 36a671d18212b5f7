// VerbsLink receive path: polls the receive CQ, hands each receive buffer to
// the handler of its SEND kind, and feeds frame bytes to the shared
// FrameAssembler (frame_assembler.h), exactly as the TCP link does. A
// buffer is reposted (and its credit owed back) once it is consumed; a
// paused sink or a frame limit keeps it, to resume at the same byte.
#include <arpa/inet.h>
#include <sys/epoll.h>

#include <chrono>

#include "device.h"
#include "verbs_link.h"

namespace zipper::proto::verbs {
namespace {
constexpr int kPollBatch = 32;
}  // namespace

bool VerbsLink::repost(std::uint64_t buf) {
  if (srq_) {
    std::string why;
    if (!srq_->repost(buf, &why)) {
      fail(LinkErrorKind::kSystem, why);
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
    fail(LinkError::from_errno("ibv_post_recv", rc));
    return false;
  }
  return true;
}

bool VerbsLink::release(std::uint64_t buf) {
  if (!repost(buf)) return false;
  std::lock_guard lk(send_mu_);
  credits_.on_reposted();
  return true;
}

void VerbsLink::drain_comp_events() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(comp_.get(), &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
  // Re-arm before polling: a completion after the poll still wakes the caller.
  ibv_req_notify_cq(send_cq_.get(), 0);
  ibv_req_notify_cq(recv_cq_.get(), 0);
  epoll_event evs[4];
  (void)epoll_wait(epfd_.get(), evs, 4, 0);  // consume the inner ready list (nested epoll)
}

bool VerbsLink::poll_recv_cq() {
  ibv_wc wcs[kPollBatch];
  const int n = ibv_poll_cq(recv_cq_.get(), kPollBatch, wcs);
  if (n < 0) {
    fail(LinkErrorKind::kSystem, "ibv_poll_cq (receive CQ) failed");
    return false;
  }
  for (int i = 0; i < n; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) {
      if (wcs[i].status == IBV_WC_WR_FLUSH_ERR && (peer_disconnected_ || disconnected_)) continue;
      fail_wc("receive from", wcs[i]);
      return false;
    }
    if ((wcs[i].wc_flags & IBV_WC_WITH_IMM) == 0) {
      fail(LinkErrorKind::kMalformed, "malformed SEND from " + peer_ + ": no immediate data");
      return false;
    }
    rx_backlog_.push_back(RecvWc{wcs[i].wr_id, wcs[i].byte_len, ntohl(wcs[i].imm_data)});
    last_rx_ = std::chrono::steady_clock::now();
  }
  return true;
}

VerbsLink::WcUse VerbsLink::on_frame_bytes(RecvWc& wc, RecvSink& sink, std::size_t max_frames,
                                           std::size_t* frames) {
  const bool cont = imm_kind(wc.imm) == SendKind::kFrameCont;
  if (await_write_) {
    fail(LinkErrorKind::kMalformed,
         "malformed frame from " + peer_ + ": frame data while an RDMA WRITE is due");
    return WcUse::kError;
  }
  if (wc.off == 0 && cont != asm_.in_frame()) {
    fail(LinkErrorKind::kMalformed,
         "malformed frame from " + peer_ +
             (asm_.in_frame() ? ": new frame inside a frame" : ": payload outside a frame"));
    return WcUse::kError;
  }
  // The SEND carries the rest of the current frame, then whole frames, then
  // possibly the start of one more.
  const std::size_t limit = max_frames == 0 ? 0 : max_frames - *frames;
  const auto r = asm_.feed(std::span<const std::byte>(recv_buf(wc.buf) + wc.off, wc.len - wc.off),
                           sink, limit);
  wc.off += static_cast<std::uint32_t>(r.consumed);
  *frames += r.frames;
  switch (r.outcome) {
    case FrameAssembler::Outcome::kError:
      fail(asm_.error());
      return WcUse::kError;
    case FrameAssembler::Outcome::kPaused:
      return WcUse::kPaused;
    case FrameAssembler::Outcome::kLimit:
      return wc.off < wc.len ? WcUse::kHeld : WcUse::kDone;
    case FrameAssembler::Outcome::kNeedMore:
      break;
  }
  if (asm_.header_bytes() > 0) {  // the sender never splits a header
    fail(LinkErrorKind::kMalformed, "malformed frame from " + peer_ + ": partial header in a SEND");
    return WcUse::kError;
  }
  return WcUse::kDone;
}

VerbsLink::WcUse VerbsLink::on_write_header(RecvWc& wc, RecvSink& sink) {
  // wc.off is kHeaderSize when a paused destination request is retried.
  const bool resumed = wc.off == kHeaderSize && asm_.awaiting_dest();
  if (!resumed && (wc.off != 0 || !asm_.at_boundary() || await_write_ || wc.len != kHeaderSize)) {
    fail(LinkErrorKind::kMalformed,
         "malformed frame from " + peer_ + ": unexpected RDMA WRITE announcement");
    return WcUse::kError;
  }
  const auto r =
      asm_.feed(std::span<const std::byte>(recv_buf(wc.buf) + wc.off, wc.len - wc.off), sink, 0);
  wc.off += static_cast<std::uint32_t>(r.consumed);
  if (r.outcome == FrameAssembler::Outcome::kError) {
    fail(asm_.error());
    return WcUse::kError;
  }
  if (r.outcome == FrameAssembler::Outcome::kPaused) return WcUse::kPaused;
  const std::span<std::byte> dest = asm_.direct_span();
  if (dest.empty()) {  // an empty payload never goes by RDMA WRITE
    fail(LinkErrorKind::kMalformed,
         "malformed frame from " + peer_ + ": RDMA WRITE announced for an empty payload");
    return WcUse::kError;
  }
  std::string why;
  write_dest_reg_ =
      dev_->registration_for(Payload{dest, nullptr, {}}, Access::kRemoteWrite, true, &why);
  if (!write_dest_reg_) {
    fail(LinkErrorKind::kSystem,
         "link " + peer_ + ": cannot register the RDMA WRITE destination: " + why);
    return WcUse::kError;
  }
  await_write_ = true;
  std::lock_guard lk(send_mu_);
  grant_to_send_ = WriteGrant{reinterpret_cast<std::uintptr_t>(dest.data()), write_dest_reg_.rkey,
                              static_cast<std::uint32_t>(dest.size())};
  return WcUse::kDone;
}

VerbsLink::WcUse VerbsLink::on_write_data(RecvWc& wc, RecvSink& sink, std::size_t* frames) {
  if (!await_write_ || wc.len != asm_.direct_span().size()) {
    fail(LinkErrorKind::kMalformed, "malformed frame from " + peer_ +
                                        ": unexpected RDMA WRITE of " + std::to_string(wc.len) +
                                        " bytes");
    return WcUse::kError;
  }
  await_write_ = false;
  write_dest_reg_ = {};  // remote access ends with the frame (unless a long-lived region)
  asm_.direct_received(wc.len, sink);
  ++*frames;
  return WcUse::kDone;
}

VerbsLink::WcUse VerbsLink::on_grant(const std::byte* data, std::size_t len) {
  if (len != kWriteGrantSize) {
    fail(LinkErrorKind::kMalformed, "malformed RDMA WRITE grant from " + peer_);
    return WcUse::kError;
  }
  const WriteGrant g = decode_grant(data);
  std::lock_guard lk(send_mu_);
  for (QueuedSend& f : sendq_)
    if (f.write == QueuedSend::Write::kAwaitGrant) {
      f.grant = g;
      f.write = QueuedSend::Write::kGranted;
      return WcUse::kDone;
    }
  fail(LinkErrorKind::kProtocol, "link " + peer_ + ": RDMA WRITE grant for no frame");
  return WcUse::kError;
}

VerbsLink::WcUse VerbsLink::consume(RecvWc& wc, RecvSink& sink, std::size_t max_frames,
                                    std::size_t* frames) {
  if (!wc.credits_taken) {
    std::lock_guard lk(send_mu_);
    if (!credits_.on_returned(imm_credits(wc.imm))) {
      fail(LinkErrorKind::kProtocol,
           "link " + peer_ + ": the peer returned more credits than it owed");
      return WcUse::kError;
    }
    wc.credits_taken = true;
  }
  switch (imm_kind(wc.imm)) {
    case SendKind::kFrameStart:
    case SendKind::kFrameCont:
      return on_frame_bytes(wc, sink, max_frames, frames);
    case SendKind::kWriteHeader:
      return on_write_header(wc, sink);
    case SendKind::kWriteData:
      return on_write_data(wc, sink, frames);
    case SendKind::kWriteGrant:
      return on_grant(recv_buf(wc.buf), wc.len);
    case SendKind::kCredit:
      if (wc.len == 0) return WcUse::kDone;
      fail(LinkErrorKind::kMalformed, "malformed credit message from " + peer_);
      return WcUse::kError;
    case SendKind::kFin:
      peer_fin_ = true;
      return WcUse::kDone;
  }
  fail(LinkErrorKind::kMalformed, "malformed SEND from " + peer_ + ": unknown kind");
  return WcUse::kError;
}

LinkStatus VerbsLink::deliver_peer_hello(RecvSink& sink) {
  FrameHeader h;
  h.type = FrameType::kHello;
  h.job_id = peer_hello_->job_id;
  h.src = peer_hello_->vrank;
  SiteHello hello;
  hello.vrank = peer_hello_->vrank;
  hello.site = peer_hello_->site;
  hello.site_ranks = peer_hello_->site_ranks;
  for (std::uint32_t r : hello.site_ranks) hello.world += r;  // checked by decode_params
  h.payload_len = static_cast<std::uint32_t>(site_hello_size(hello.site_ranks.size()));
  auto d = sink.payload_dest(h);
  if (!d) return LinkStatus::kPaused;
  if (!encode_site_hello(hello, d->bytes) || d->bytes.size() != h.payload_len)
    return fail(LinkErrorKind::kInternal, "internal: payload buffer size mismatch");
  peer_hello_.reset();
  epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, hello_fd_.get(), nullptr);
  hello_fd_.reset();
  sink.on_frame(h, std::move(*d));
  return LinkStatus::kOk;
}

void VerbsLink::keepalive() {
  if (cfg_.keepalive_ms == 0 || peer_disconnected_ || peer_fin_) return;
  // An idle receiver cannot tell a quiet peer from a dead one (its QP may be
  // gone without a DREQ reaching us): probe with a credit SEND, which fails
  // with a transport retry error if nobody acknowledges it.
  const auto now = std::chrono::steady_clock::now();
  const auto idle = std::chrono::milliseconds(cfg_.keepalive_ms);
  if (now - last_rx_ < idle || now - last_probe_ < idle) return;
  last_probe_ = now;
  std::lock_guard lk(send_mu_);
  LinkStatus st = LinkStatus::kOk;
  if (started_ && !disconnected_ && posted_.empty()) post_control_locked(SendKind::kCredit, &st);
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
  bool paused = false;
  for (;;) {
    if (failed()) return LinkStatus::kError;
    if (rx_backlog_.empty()) {
      if (!poll_recv_cq()) return LinkStatus::kError;
      if (rx_backlog_.empty()) {
        // Adaptive polling: spin briefly on an idle link before the caller sleeps.
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
    const WcUse use = consume(wc, sink, max_frames, &frames);
    if (use == WcUse::kError) return LinkStatus::kError;
    if (use == WcUse::kPaused) {
      paused = true;  // asked again later; the buffer stays held
      break;
    }
    if (use == WcUse::kHeld) break;
    const std::uint64_t buf = wc.buf;
    rx_backlog_.pop_front();
    if (!release(buf)) return LinkStatus::kError;
    if (max_frames != 0 && frames >= max_frames) break;
  }
  keepalive();
  // Returned credits and freed send slots may unblock sends; owed credits may
  // be due back (completion channels never signal writability).
  if (progress_send_internal() == LinkStatus::kError) return LinkStatus::kError;
  if (paused) return LinkStatus::kPaused;
  if (rx_backlog_.empty() && (peer_fin_ || peer_disconnected_)) {
    if (!asm_.at_boundary())
      return fail(LinkErrorKind::kTruncated,
                  "connection closed by " + peer_ + " in the middle of a frame");
    if (failed()) return LinkStatus::kError;
    return LinkStatus::kClosed;
  }
  return LinkStatus::kOk;
}

}  // namespace zipper::proto::verbs
