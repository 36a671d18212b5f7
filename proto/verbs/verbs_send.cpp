// VerbsLink send progress: the shared send queue (urgent frames overtake
// frames not yet started) and the layer that picks a send method for each
// SEND (verbs_send_methods.cpp):
//   - payload >= ZIPPER_VERBS_WRITE_MIN: header SEND, then RDMA WRITE into
//     the peer's grant (frames behind it wait: the receiver takes frames in
//     order);
//   - continuation of a payload >= ZIPPER_VERBS_ZCOPY_MIN that has a
//     registration (long-lived region or MR cache): zero-copy SEND;
//   - otherwise pack the rest of the head frame and following frames into
//     one SEND: inline when it fits, else copied into a send slot.
#include <algorithm>

#include "verbs_link.h"

namespace zipper::proto::verbs {
namespace {
constexpr int kPollBatch = 32;
constexpr int kMaxPackedFrames = 16;  // frames per packed SEND
}  // namespace

void VerbsLink::post(OutFrame frame) {
  std::lock_guard lk(send_mu_);
  sendq_.push(std::move(frame));
}

bool VerbsLink::send_pending() const {
  std::lock_guard lk(send_mu_);
  return !sendq_.empty();
}

std::size_t VerbsLink::send_queued_bytes() const {
  std::lock_guard lk(send_mu_);
  return sendq_.queued_bytes();
}

LinkStatus VerbsLink::progress_send() { return progress_send_internal(); }

LinkStatus VerbsLink::progress_send_internal() {
  std::vector<QueuedSend> done;
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

void VerbsLink::collect_done_locked(std::vector<QueuedSend>& done) {
  while (!sendq_.empty()) {
    QueuedSend& p = sendq_.front();
    if (!p.all_handed() || (p.zero_copy && p.last_wr > wr_done_)) break;
    done.push_back(std::move(p));
    sendq_.pop_front();
  }
}

LinkStatus VerbsLink::reap_send_cq_locked(std::vector<QueuedSend>& done) {
  ibv_wc wcs[kPollBatch];
  for (;;) {
    const int n = ibv_poll_cq(send_cq_.get(), kPollBatch, wcs);
    if (n < 0) return fail(LinkErrorKind::kSystem, "ibv_poll_cq (send CQ) failed");
    for (int i = 0; i < n; ++i) {
      if (posted_.empty())
        return fail(LinkErrorKind::kInternal, "send CQ: completion without a posted WR");
      const PostedWr w = posted_.front();
      posted_.pop_front();
      ++wr_done_;  // an RC send queue completes in posting order
      if (w.slot >= 0) free_slots_.push_back(w.slot);
      if (wcs[i].status != IBV_WC_SUCCESS) {
        if (wcs[i].status == IBV_WC_WR_FLUSH_ERR && disconnected_) continue;
        return fail_wc("send to", wcs[i]);
      }
    }
    if (n < kPollBatch) break;
  }
  collect_done_locked(done);
  return LinkStatus::kOk;
}

LinkStatus VerbsLink::send_locked(std::vector<QueuedSend>& done) {
  if (!started_ || disconnected_) return failed() ? LinkStatus::kError : LinkStatus::kOk;
  if (failed()) return LinkStatus::kError;
  LinkStatus st = reap_send_cq_locked(done);
  if (st != LinkStatus::kOk) return st;
  if (grant_to_send_) {
    const auto g = encode_grant(*grant_to_send_);
    if (send_small_locked(SendKind::kWriteGrant, g.data(), g.size(), &st)) grant_to_send_.reset();
    if (st != LinkStatus::kOk) return st;
  }
  while (send_next_locked(&st)) {
  }
  if (st != LinkStatus::kOk) return st;
  if (credits_.credit_message_due() && !post_control_locked(SendKind::kCredit, &st) &&
      st != LinkStatus::kOk)
    return st;
  if (fin_wanted_ && !fin_sent_ && sendq_.all_handed()) {
    if (post_control_locked(SendKind::kFin, &st)) fin_sent_ = true;
    if (st != LinkStatus::kOk) return st;
  }
  collect_done_locked(done);  // e.g. frames dropped by the header hook
  return LinkStatus::kOk;
}

bool VerbsLink::send_next_locked(LinkStatus* st) {
  auto it = sendq_.begin();
  while (it != sendq_.end() && !sendq_.encode(*it, hook_)) ++it;
  if (it == sendq_.end() || !data_room_locked()) return false;
  QueuedSend& head = *it;
  if (by_write(head)) return send_by_write_locked(head, st);
  const std::size_t plen = head.frame.payload.bytes.size();
  if (head.handed >= kHeaderSize && cfg_.zcopy_min > 0 && plen >= cfg_.zcopy_min &&
      send_zcopy_locked(head, st))
    return true;
  if (*st != LinkStatus::kOk) return false;
  return send_packed_locked(it, st);
}

bool VerbsLink::send_by_write_locked(QueuedSend& f, LinkStatus* st) {
  if (f.handed == 0) {
    // Announce the frame; its payload follows by RDMA WRITE once granted.
    if (!send_small_locked(SendKind::kWriteHeader, f.wire.data(), kHeaderSize, st)) return false;
    sendq_.handed(f, kHeaderSize);
    f.last_wr = wr_posted_;
    f.write = QueuedSend::Write::kAwaitGrant;
    return true;
  }
  // Frames behind it wait: the receiver takes frames strictly in order.
  if (f.write != QueuedSend::Write::kGranted || f.all_handed()) return false;
  const std::size_t plen = f.frame.payload.bytes.size();
  if (f.grant.len != plen) {
    *st = fail(LinkErrorKind::kProtocol, "link " + peer_ + ": RDMA WRITE grant for " +
                                             std::to_string(f.grant.len) +
                                             " bytes, frame payload is " + std::to_string(plen));
    return false;
  }
  if (!f.reg) {
    std::string why;
    f.reg = dev_->registration_for(f.frame.payload, Access::kLocal, true, &why);
    if (!f.reg) {
      *st = fail(LinkErrorKind::kSystem,
                 "link " + peer_ + ": cannot register a payload for RDMA WRITE: " + why);
      return false;
    }
  }
  if (!post_rdma_write_locked(f.frame.payload.bytes.data(), plen, f.reg.lkey, f.grant, st))
    return false;
  sendq_.handed(f, plen);
  f.last_wr = wr_posted_;
  f.zero_copy = true;
  return true;
}

bool VerbsLink::send_zcopy_locked(QueuedSend& f, LinkStatus* st) {
  if (!f.reg) {
    std::string why;
    f.reg = dev_->registration_for(f.frame.payload, Access::kLocal, false, &why);
    if (!f.reg) return false;  // nothing long-lived to send from: copy instead
  }
  const std::size_t poff = f.handed - kHeaderSize;
  const std::size_t take =
      std::min<std::size_t>(f.frame.payload.bytes.size() - poff, peer_buffer_size_);
  if (!post_zcopy_locked(SendKind::kFrameCont, f.frame.payload.bytes.data() + poff, take,
                         f.reg.lkey, st))
    return false;
  sendq_.handed(f, take);
  f.last_wr = wr_posted_;
  f.zero_copy = true;
  return true;
}

bool VerbsLink::send_packed_locked(Queue::iterator head, LinkStatus* st) {
  // The rest of the head frame and as many following frames as fit in one
  // receive buffer of the peer. A frame header never straddles two SENDs.
  const std::size_t cap = peer_buffer_size_;
  const SendKind kind = head->handed == 0 ? SendKind::kFrameStart : SendKind::kFrameCont;
  struct Part {
    QueuedSend* f;
    std::size_t take;
  };
  Part parts[kMaxPackedFrames];
  int nparts = 0;
  Gather g;
  for (auto q = head; q != sendq_.end() && nparts < kMaxPackedFrames && g.bytes < cap; ++q) {
    if (!sendq_.encode(*q, hook_)) continue;
    if (q != head && by_write(*q)) break;
    if (q->handed == 0 && cap - g.bytes < kHeaderSize) break;
    const std::size_t take = std::min(q->total() - q->handed, cap - g.bytes);
    std::size_t from = q->handed, left = take;
    if (from < kHeaderSize) {
      const std::size_t h = std::min(kHeaderSize - from, left);
      g.add(q->wire.data() + from, h);
      from += h;
      left -= h;
    }
    if (left > 0) g.add(q->frame.payload.bytes.data() + (from - kHeaderSize), left);
    parts[nparts++] = {&*q, take};
    if (q->handed + take < q->total()) break;
  }
  const bool posted =
      g.bytes <= max_inline_ ? post_inline_locked(kind, g, st) : post_copy_locked(kind, g, st);
  if (!posted) return false;
  for (int i = 0; i < nparts; ++i) {
    sendq_.handed(*parts[i].f, parts[i].take);
    parts[i].f->last_wr = wr_posted_;
  }
  return true;
}

bool VerbsLink::send_small_locked(SendKind kind, const std::byte* data, std::size_t len,
                                  LinkStatus* st) {
  Gather g;
  g.add(data, len);
  return len <= max_inline_ ? post_inline_locked(kind, g, st) : post_copy_locked(kind, g, st);
}

}  // namespace zipper::proto::verbs
