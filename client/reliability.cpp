// Engine: end-to-end acknowledgement and resending over several rails
// (reliability.h has the protocol).
#include <algorithm>

#include "engine.h"

namespace zipper::client {

using Clock = std::chrono::steady_clock;
using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

namespace {
OutFrame control(FrameType type, std::uint8_t flags, int peer, std::uint64_t seq) {
  OutFrame f;
  f.hdr.type = type;
  f.hdr.flags = flags;
  f.hdr.dst = static_cast<std::uint32_t>(peer);
  f.hdr.seq = seq;
  return f;
}
}  // namespace

// ---- sender ----------------------------------------------------------------

void Engine::keep_eager_copy(const OutFrame& f) {
  PeerTx& t = tx_[f.hdr.dst];
  if (t.eager.empty()) t.last_tx = Clock::now();
  auto bytes = std::static_pointer_cast<std::vector<std::byte>>(f.payload.owner);
  retained_bytes_ += bytes->size();
  ++retained_copies_;
  t.eager.push_back(EagerCopy{f.hdr, std::move(bytes)});
}

void Engine::on_ack(int peer, std::uint64_t upto) {
  PeerTx& t = tx_[static_cast<std::size_t>(peer)];
  if (upto <= t.acked) return;  // an older ACK, overtaken
  t.acked = upto;
  while (!t.eager.empty() && t.eager.front().hdr.seq < upto) {
    retained_bytes_ -= t.eager.front().bytes->size();
    --retained_copies_;
    t.eager.pop_front();
  }
  t.last_tx = Clock::now();
}

void Engine::on_fin(int peer, std::uint64_t seq) {
  auto it = rndv_sends_.find({peer, seq});
  if (it == rndv_sends_.end()) return;  // a FIN sent again: done already
  Request* s = it->second;
  rndv_sends_.erase(it);
  std::erase(streaming_, s);
  s->chunk_rail.clear();
  complete(s, MPI_SUCCESS);
}

void Engine::on_cts(int peer, const FrameHeader& h) {
  auto it = rndv_sends_.find({peer, h.seq});
  if (it == rndv_sends_.end()) return;  // a CTS sent again for a message complete
  Request* s = it->second;
  const auto now = Clock::now();
  if (s->cts_seen) {
    // The receiver still waits for data: after a failover or a resent RTS.
    // Chunks on healthy rails are on their way unless the last send is old.
    if (s->next_unposted >= s->chunk_rail.size() && now - s->last_tx > resend_after_) {
      std::fill(s->chunk_rail.begin(), s->chunk_rail.end(), std::int8_t{-1});
      s->next_unposted = 0;
      s->last_tx = now;
      streaming_.push_back(s);
      pump_chunks();
    }
    return;
  }
  s->cts_seen = true;
  s->accepted = std::min(h.msg_len, s->send_bytes);
  s->last_tx = now;
  if (s->accepted == 0) return;  // the FIN follows
  s->chunk = rendezvous_chunk(s->accepted, rails_.chunk_size());
  s->chunk_rail.assign((s->accepted + s->chunk - 1) / s->chunk, std::int8_t{-1});
  s->next_unposted = 0;
  streaming_.push_back(s);
  pump_chunks();
}

void Engine::pump_chunks() {
  // Chunks go out as rails have credit: each rail carries in proportion to
  // how fast it returns credit (UCX's rail weights, measured rather than set).
  for (std::size_t i = 0; i < streaming_.size();) {
    Request* s = streaming_[i];
    const std::span<std::byte> message(s->send_data, s->accepted);
    PeerTx& t = tx_[static_cast<std::size_t>(s->peer)];
    while (s->next_unposted < s->chunk_rail.size()) {
      const std::uint32_t c = s->next_unposted;
      if (s->chunk_rail[c] >= 0) {
        ++s->next_unposted;
        continue;
      }
      const int rail = rails_.chunk_rail(t.avoid);
      if (rail < 0) return;  // every rail waits for credit: on the next progress
      const std::uint64_t off = c * s->chunk;
      OutFrame f;
      f.hdr.type = FrameType::kChunk;
      f.hdr.dst = static_cast<std::uint32_t>(s->peer);
      f.hdr.seq = s->seq;
      f.hdr.msg_len = s->accepted;
      f.hdr.chunk_offset = off;
      f.payload = Payload::borrow(message.data() + off, std::min(s->chunk, s->accepted - off));
      s->chunk_rail[c] = static_cast<std::int8_t>(rail);
      ++s->next_unposted;
      rails_.send(rail, std::move(f));
    }
    streaming_.erase(streaming_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Engine::send_rts(Request* s) {
  OutFrame f = control(FrameType::kRts, 0, s->peer, s->seq);
  f.hdr.tag = s->tag;
  f.hdr.context_id = s->context;
  f.hdr.msg_len = s->send_bytes;
  send_pair(s->peer, std::move(f));
}

void Engine::resend_to(int peer, int failed_rail) {
  PeerTx& t = tx_[static_cast<std::size_t>(peer)];
  // Every header not known to be in, in sequence order (the receiver needs
  // them in order and drops what it has): EAGER copies, and the RTS of
  // every rendezvous without a FIN (a query when its data went out already:
  // the receiver answers FIN, or CTS when data is missing).
  std::vector<std::pair<std::uint64_t, Request*>> rts;
  for (auto it = rndv_sends_.lower_bound({peer, 0});
       it != rndv_sends_.end() && it->first.first == peer; ++it)
    rts.emplace_back(it->first.second, it->second);
  auto e = t.eager.begin();
  auto q = rts.begin();
  while (e != t.eager.end() || q != rts.end()) {
    if (q == rts.end() || (e != t.eager.end() && e->hdr.seq < q->first)) {
      OutFrame f;
      f.hdr = e->hdr;
      f.payload = Payload{std::span<std::byte>(e->bytes->data(), e->bytes->size()), e->bytes};
      send_pair(peer, std::move(f));
      ++e;
    } else {
      send_rts(q->second);
      ++q;
    }
  }
  const auto now = Clock::now();
  t.last_tx = now;
  // Chunks that crossed the failed rail are posted again.
  for (auto& [seq, s] : rts) {
    s->last_tx = now;
    if (failed_rail < 0 || !s->cts_seen) continue;
    bool again = false;
    for (auto& rail : s->chunk_rail) {
      if (rail == failed_rail) {
        rail = -1;
        again = true;
      }
    }
    if (again) {
      s->next_unposted = 0;
      if (std::find(streaming_.begin(), streaming_.end(), s) == streaming_.end())
        streaming_.push_back(s);
    }
  }
  pump_chunks();
  rails_.flush();
}

void Engine::drop_peer_state(int peer) {
  PeerTx& t = tx_[static_cast<std::size_t>(peer)];
  for (const auto& c : t.eager) retained_bytes_ -= c.bytes->size();
  retained_copies_ -= t.eager.size();
  t.eager.clear();
  std::erase_if(streaming_, [peer](Request* s) { return s->peer == peer; });
  rx_[static_cast<std::size_t>(peer)].held.clear();
  std::erase(ack_due_, peer);
}

bool Engine::reliable_idle() const { return rndv_sends_.empty() && retained_copies_ == 0; }

// ---- receiver --------------------------------------------------------------

void Engine::header_arrived(int src) {
  PeerRx& r = rx_[static_cast<std::size_t>(src)];
  const std::uint64_t in = next_recv_seq_[static_cast<std::size_t>(src)];
  if (in - r.acked_sent >= kAckEvery) return send_ack(src);
  if (!r.ack_pending) {
    r.ack_pending = true;
    r.due = Clock::now() + kAckDelay;
    ack_due_.push_back(src);
  }
}

void Engine::send_ack(int peer) {
  PeerRx& r = rx_[static_cast<std::size_t>(peer)];
  r.acked_sent = next_recv_seq_[static_cast<std::size_t>(peer)];
  if (r.ack_pending) {
    r.ack_pending = false;
    std::erase(ack_due_, peer);
  }
  send_pair(peer, control(FrameType::kCts, proto::kCtsAck, peer, r.acked_sent));
}

void Engine::send_fin(int peer, std::uint64_t seq) {
  send_pair(peer, control(FrameType::kCts, proto::kCtsFin, peer, seq));
}

void Engine::on_duplicate(const FrameHeader& h) {
  const int src = static_cast<int>(h.src);
  if (h.type == FrameType::kRts) {
    if (auto it = rndv_recvs_.find({src, h.seq}); it != rndv_recvs_.end()) {
      // Still arriving: the CTS again (the sender resends what is missing).
      OutFrame cts = control(FrameType::kCts, 0, src, h.seq);
      cts.hdr.tag = h.tag;
      cts.hdr.msg_len = it->second->rndv_expected;
      send_pair(src, std::move(cts));
    } else if (!unexpected_rts_.count({src, h.seq})) {
      send_fin(src, h.seq);  // complete: the FIN was lost
    }
  }
  send_ack(src);  // the sender resent because it lacks an ACK
}

void Engine::hold(const FrameHeader& h, Payload payload) {
  const int src = static_cast<int>(h.src);
  auto& held = rx_[static_cast<std::size_t>(src)].held;
  // Bounded by what the sender keeps unacknowledged (MMPI_RETRANSMIT_BYTES).
  if (!held.count(h.seq)) held.emplace(h.seq, HeldFrame{h, std::move(payload)});
}

void Engine::release_held(int src) {
  auto& held = rx_[static_cast<std::size_t>(src)].held;
  auto& expect = next_recv_seq_[static_cast<std::size_t>(src)];
  while (!held.empty()) {
    auto it = held.begin();
    if (it->first < expect) {
      held.erase(it);  // a copy of one taken since
      continue;
    }
    if (it->first != expect) return;
    HeldFrame f = std::move(it->second);
    held.erase(it);
    ++expect;
    Request* r = nullptr;
    if (auto p = queue_.match_posted(Envelope{src, f.hdr.tag, f.hdr.context_id})) {
      unposted(*p);
      r = *p;
    }
    accept_in_order(f.hdr, std::move(f.payload), r);
  }
}

// ---- timers ----------------------------------------------------------------

void Engine::reliability_tick() {
  pump_chunks();
  // Copies of empty messages count too (retained_bytes_ does not see them).
  if (ack_due_.empty() && reliable_idle()) return;
  const auto now = Clock::now();
  for (int p : std::vector<int>(ack_due_))
    if (rx_[static_cast<std::size_t>(p)].due <= now) send_ack(p);
  if (now < next_tick_) return;
  next_tick_ = now + resend_after_ / 4;
  // Unacknowledged for a whole forwarder timeout: an ACK, CTS or FIN was
  // lost (or the receiver does not progress); ask again.
  std::set<int> stale;
  for (int p = 0; p < world_size_; ++p) {
    const PeerTx& t = tx_[static_cast<std::size_t>(p)];
    if (!t.eager.empty() && now - t.last_tx > resend_after_) stale.insert(p);
  }
  for (const auto& [key, s] : rndv_sends_)
    if (now - s->last_tx > resend_after_) stale.insert(key.first);
  for (int p : stale) resend_to(p, -1);
}

}  // namespace zipper::client
