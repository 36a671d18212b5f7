// The delivery layer (peer_transport.h): per-pair order, the rendezvous
// stream, and with several rails acknowledgement and resending.
#include "peer_transport.h"

#include <algorithm>

#include "chunking.h"

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

PeerTransport::PeerTransport(RailPort& rails, DeliveryHandler& up, int rank, const SiteMap& sites,
                             std::uint64_t retransmit_bytes, int resend_after_ms)
    : rails_(rails),
      up_(up),
      sites_(sites),
      rank_(rank),
      world_size_(sites.world_size()),
      straight_(rails.size() <= 1),
      retransmit_limit_(retransmit_bytes),
      resend_after_(std::max(resend_after_ms, 100)),
      next_send_seq_(static_cast<std::size_t>(world_size_), 0),
      next_recv_seq_(static_cast<std::size_t>(world_size_), 0),
      header_order_(static_cast<std::size_t>(std::max(rails.size(), 1)), HeaderOrder::kInOrder) {
  if (!straight_) {
    tx_.resize(static_cast<std::size_t>(world_size_));
    rx_.resize(static_cast<std::size_t>(world_size_));
  }
}

void PeerTransport::fail_all(const std::string& why) {
  // A protocol failure is the peer's or a forwarder's fault, never ours to
  // mend: every rail goes (MPI's default is to abort on wrong data).
  for (int i = 0; i < rails_.size(); ++i) rails_.fail_soon(i, why);
}

// To one peer, EAGER, RTS, CTS and acknowledgements take the pair's rail, so
// that one pair's frames stay in order.
void PeerTransport::send_pair(int peer, OutFrame f) {
  if (straight_) return rails_.send(0, std::move(f));
  PeerTx& t = tx_[static_cast<std::size_t>(peer)];
  if (t.rail < 0 || !rails_.usable(t.rail) || (t.avoid >> t.rail & 1))
    t.rail = rails_.pair_rail(local_index(), t.avoid);
  if (t.rail < 0) return;  // no rail reaches the peer: on_peer_gone / on_link_failed fail it
  rails_.send(t.rail, std::move(f));
}

// ---- sender ----------------------------------------------------------------

void PeerTransport::send_eager(OutFrame f, Request* owner) {
  if (straight_) {
    f.on_sent = [this, owner] { up_.send_complete(owner); };
    return send_pair(static_cast<int>(f.hdr.dst), std::move(f));
  }
  // Kept until the peer acknowledges it: the user's buffer is free at once,
  // as with one rail once the frame is out.
  auto copy =
      std::make_shared<std::vector<std::byte>>(f.payload.bytes.begin(), f.payload.bytes.end());
  f.payload = Payload{std::span<std::byte>(copy->data(), copy->size()), copy};
  keep_eager_copy(f);
  up_.send_complete(owner);
  send_pair(static_cast<int>(f.hdr.dst), std::move(f));
}

void PeerTransport::send_rts(SendStream* s) {
  s->last_tx = Clock::now();
  streams_[{s->peer, s->seq}] = s;
  OutFrame f = control(FrameType::kRts, 0, s->peer, s->seq);
  f.hdr.tag = s->tag;
  f.hdr.context_id = s->context;
  f.hdr.msg_len = s->bytes;
  send_pair(s->peer, std::move(f));
}

void PeerTransport::send_cts(int peer, std::int32_t tag, std::uint64_t seq,
                             std::uint64_t accepted) {
  OutFrame cts = control(FrameType::kCts, 0, peer, seq);
  cts.hdr.tag = tag;
  cts.hdr.msg_len = accepted;
  send_pair(peer, std::move(cts));
}

void PeerTransport::keep_eager_copy(const OutFrame& f) {
  PeerTx& t = tx_[f.hdr.dst];
  if (t.eager.empty()) t.last_tx = Clock::now();
  auto bytes = std::static_pointer_cast<std::vector<std::byte>>(f.payload.owner);
  retained_bytes_ += bytes->size();
  ++retained_copies_;
  t.eager.push_back(EagerCopy{f.hdr, std::move(bytes)});
}

void PeerTransport::on_ack(int peer, std::uint64_t upto) {
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

void PeerTransport::finish(SendStream* s) {
  streams_.erase({s->peer, s->seq});
  std::erase(streaming_, s);
  s->chunk_rail.clear();
  up_.send_complete(s->owner);
}

void PeerTransport::on_fin(int peer, std::uint64_t seq) {
  auto it = streams_.find({peer, seq});
  if (it == streams_.end()) return;  // a FIN sent again: done already
  finish(it->second);
}

// The one rendezvous path: the CTS says how many bytes the receiver takes,
// then the chunks go out (pump_chunks) and the send completes after them.
void PeerTransport::on_cts(int peer, const FrameHeader& h) {
  auto it = streams_.find({peer, h.seq});
  if (it == streams_.end() || (straight_ && it->second->cts_seen)) {
    if (straight_)
      fail_all("CTS for unknown message " + std::to_string(h.seq) + " from rank " +
               std::to_string(h.src));
    return;  // several rails: a CTS sent again for a message complete
  }
  SendStream* s = it->second;
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
  s->accepted = std::min(h.msg_len, s->bytes);
  s->last_tx = now;
  if (s->accepted == 0) {
    if (straight_) finish(s);
    return;  // several rails: the FIN follows
  }
  s->chunk = rendezvous_chunk(s->accepted, rails_.chunk_size());
  s->chunk_rail.assign((s->accepted + s->chunk - 1) / s->chunk, std::int8_t{-1});
  s->chunks_left = static_cast<std::uint32_t>(s->chunk_rail.size());
  s->next_unposted = 0;
  streaming_.push_back(s);
  pump_chunks();
}

void PeerTransport::pump_chunks() {
  for (std::size_t i = 0; i < streaming_.size();) {
    SendStream* s = streaming_[i];
    const std::span<std::byte> message(s->data, s->accepted);
    // One rail: every chunk is posted at once; credit, not a round trip,
    // paces them, so zipperd relays chunk i while chunk i+1 is on its way in.
    // The chunks share one owner token and the message as their extent: a
    // verbs link registers the message once (MR cache) instead of once per
    // chunk; the token dies with the last chunk, which invalidates that
    // registration. The user buffer stays borrowed until the send completes.
    // Several rails: chunks go out as rails have credit, so each rail carries
    // in proportion to how fast it returns credit (UCX's rail weights,
    // measured rather than set); a chunk may be posted again after a failover.
    const std::shared_ptr<void> token = straight_ ? std::make_shared<char>() : nullptr;
    const std::uint64_t avoid = straight_ ? 0 : tx_[static_cast<std::size_t>(s->peer)].avoid;
    while (s->next_unposted < s->chunk_rail.size()) {
      const std::uint32_t c = s->next_unposted;
      if (s->chunk_rail[c] >= 0) {
        ++s->next_unposted;
        continue;
      }
      const int rail = straight_ ? 0 : rails_.chunk_rail(avoid);
      if (rail < 0) return;  // every rail waits for credit: on the next tick
      const std::uint64_t off = c * s->chunk;
      const std::uint64_t len = std::min(s->chunk, s->accepted - off);
      OutFrame f;
      f.hdr.type = FrameType::kChunk;
      f.hdr.dst = static_cast<std::uint32_t>(s->peer);
      f.hdr.seq = s->seq;
      f.hdr.msg_len = s->accepted;
      f.hdr.chunk_offset = off;
      if (straight_) {
        f.payload = Payload{message.subspan(off, len), token, message};
        f.on_sent = [this, s] {
          if (--s->chunks_left == 0) finish(s);
        };
      } else {
        f.payload = Payload::borrow(message.data() + off, len);
      }
      s->chunk_rail[c] = static_cast<std::int8_t>(rail);
      ++s->next_unposted;
      rails_.send(rail, std::move(f));
    }
    streaming_.erase(streaming_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void PeerTransport::resend_to(int peer, int failed_rail) {
  PeerTx& t = tx_[static_cast<std::size_t>(peer)];
  // Every header not known to be in, in sequence order (the receiver needs
  // them in order and drops what it has): EAGER copies, and the RTS of
  // every rendezvous without a FIN (a query when its data went out already:
  // the receiver answers FIN, or CTS when data is missing).
  std::vector<std::pair<std::uint64_t, SendStream*>> rts;
  for (auto it = streams_.lower_bound({peer, 0}); it != streams_.end() && it->first.first == peer;
       ++it)
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

std::vector<Request*> PeerTransport::drop_peer(int peer) { return drop(peer, false); }

void PeerTransport::drop_all() {
  for (int p = 0; p < world_size_; ++p) drop(p, true);
}

std::vector<Request*> PeerTransport::drop(int peer, bool link_lost) {
  std::vector<Request*> failed;
  for (auto it = streams_.lower_bound({peer, 0});
       it != streams_.end() && it->first.first == peer;) {
    if (straight_ && !link_lost && it->second->cts_seen) {
      ++it;  // one rail: its chunks are queued on the link and complete it once written
      continue;
    }
    failed.push_back(it->second->owner);
    std::erase(streaming_, it->second);
    it = streams_.erase(it);
  }
  if (straight_) return failed;
  PeerTx& t = tx_[static_cast<std::size_t>(peer)];
  for (const auto& c : t.eager) retained_bytes_ -= c.bytes->size();
  retained_copies_ -= t.eager.size();
  t.eager.clear();
  rx_[static_cast<std::size_t>(peer)].held.clear();
  std::erase(ack_due_, peer);
  std::erase_if(chunks_in_, [peer](const auto& kv) { return kv.first.first == peer; });
  return failed;
}

// ---- receiver --------------------------------------------------------------

std::optional<Payload> PeerTransport::payload_dest(int rail, const FrameHeader& h) {
  if (h.type == FrameType::kChunk) {
    if (auto dest = up_.chunk_dest(h)) return dest;
  } else if (h.type == FrameType::kEager || h.type == FrameType::kRts) {
    // The envelope is complete once the header is in: the engine matches
    // now, so the payload can land in the user's buffer.
    const auto ri = static_cast<std::size_t>(rail);
    header_order_[ri] = HeaderOrder::kInOrder;
    const int src = static_cast<int>(h.src);
    if (!peer_world(src)) {
      fail_all("frame from invalid rank " + std::to_string(h.src));
      return Payload::allocate(h.payload_len);
    }
    auto& expect = next_recv_seq_[static_cast<std::size_t>(src)];
    if (h.seq == expect) {
      ++expect;
      if (auto dest = up_.header_in_order(rail, h)) return dest;
    } else if (!straight_) {
      // Resent (a duplicate) or overtaking on another rail after a failover.
      header_order_[ri] = h.seq < expect ? HeaderOrder::kDuplicate : HeaderOrder::kEarly;
    } else {
      fail_all("message order violated from rank " + std::to_string(h.src) + ": sequence " +
               std::to_string(h.seq) + ", expected " + std::to_string(expect));
    }
  }
  return Payload::allocate(h.payload_len);
}

void PeerTransport::on_data_frame(int rail, const FrameHeader& h, Payload payload) {
  const int src = static_cast<int>(h.src);
  switch (h.type) {
    case FrameType::kEager:
    case FrameType::kRts:
      switch (std::exchange(header_order_[static_cast<std::size_t>(rail)], HeaderOrder::kInOrder)) {
        case HeaderOrder::kDuplicate:
          return on_duplicate(h);
        case HeaderOrder::kEarly:
          return hold(h, std::move(payload));
        case HeaderOrder::kInOrder:
          break;
      }
      if (!peer_world(src)) return;  // failed in payload_dest
      up_.message_in_order(rail, h, std::move(payload));
      if (!straight_) {
        header_arrived(src);
        release_held(src);
      }
      return;
    case FrameType::kCts:
      if (!peer_world(src)) return fail_all("CTS from invalid rank " + std::to_string(h.src));
      if (!straight_ && h.flags == proto::kCtsAck) return on_ack(src, h.seq);
      if (!straight_ && h.flags == proto::kCtsFin) return on_fin(src, h.seq);
      return on_cts(src, h);
    case FrameType::kChunk:
      return on_chunk(h);
    default:
      return;
  }
}

void PeerTransport::on_chunk(const FrameHeader& h) {
  const int src = static_cast<int>(h.src);
  if (!straight_) {
    std::uint64_t accepted = 0;
    if (up_.rts_state(src, h.seq, &accepted) != RtsState::kArriving) {
      // A resent chunk of a message already complete.
      if (peer_world(src) && h.seq < next_recv_seq_[static_cast<std::size_t>(src)]) return;
    } else if (h.chunk_offset + h.payload_len <= accepted &&
               !chunks_in_[{src, h.seq}].insert(h.chunk_offset).second) {
      return;  // resent: in already
    }
  }
  if (!up_.chunk_in(h)) return;
  if (!straight_) chunks_in_.erase({src, h.seq});
  rendezvous_received(src, h.seq);
}

void PeerTransport::rendezvous_received(int peer, std::uint64_t seq) {
  if (!straight_) send_fin(peer, seq);
}

void PeerTransport::header_arrived(int src) {
  PeerRx& r = rx_[static_cast<std::size_t>(src)];
  const std::uint64_t in = next_recv_seq_[static_cast<std::size_t>(src)];
  if (in - r.acked_sent >= kAckEvery) return send_ack(src);
  if (!r.ack_pending) {
    r.ack_pending = true;
    r.due = Clock::now() + kAckDelay;
    ack_due_.push_back(src);
  }
}

void PeerTransport::send_ack(int peer) {
  PeerRx& r = rx_[static_cast<std::size_t>(peer)];
  r.acked_sent = next_recv_seq_[static_cast<std::size_t>(peer)];
  if (r.ack_pending) {
    r.ack_pending = false;
    std::erase(ack_due_, peer);
  }
  send_pair(peer, control(FrameType::kCts, proto::kCtsAck, peer, r.acked_sent));
}

void PeerTransport::send_fin(int peer, std::uint64_t seq) {
  send_pair(peer, control(FrameType::kCts, proto::kCtsFin, peer, seq));
}

void PeerTransport::send_due_acks() {
  for (int p : std::vector<int>(ack_due_)) send_ack(p);  // what peers wait for
}

void PeerTransport::on_duplicate(const FrameHeader& h) {
  const int src = static_cast<int>(h.src);
  if (h.type == FrameType::kRts) {
    std::uint64_t accepted = 0;
    switch (up_.rts_state(src, h.seq, &accepted)) {
      case RtsState::kArriving:  // the CTS again (the sender resends what is missing)
        send_cts(src, h.tag, h.seq, accepted);
        break;
      case RtsState::kDone:  // the FIN was lost
        send_fin(src, h.seq);
        break;
      case RtsState::kUnexpected:
        break;
    }
  }
  send_ack(src);  // the sender resent because it lacks an ACK
}

void PeerTransport::hold(const FrameHeader& h, Payload payload) {
  const int src = static_cast<int>(h.src);
  auto& held = rx_[static_cast<std::size_t>(src)].held;
  // Bounded by what the sender keeps unacknowledged (MMPI_RETRANSMIT_BYTES).
  if (!held.count(h.seq)) held.emplace(h.seq, HeldFrame{h, std::move(payload)});
}

void PeerTransport::release_held(int src) {
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
    up_.message_in_order(-1, f.hdr, std::move(f.payload));
    header_arrived(src);
  }
}

// ---- rails and peers -------------------------------------------------------

bool PeerTransport::on_peer_gone(int rail, int vrank, const std::string& why) {
  if (!peer_world(vrank)) return false;
  if (!straight_) {
    // Gone from this forwarder only (it dropped the peer, or the peer it):
    // the peer's traffic avoids this rail while another reaches it.
    PeerTx& t = tx_[static_cast<std::size_t>(vrank)];
    t.avoid |= std::uint64_t{1} << rail;
    if (t.rail == rail) t.rail = -1;
    if (rails_.pair_rail(local_index(), t.avoid) >= 0) {
      resend_to(vrank, rail);
      return true;
    }
  }
  up_.peer_gone(vrank, why);
  return true;
}

void PeerTransport::on_rail_failed(int rail) {
  if (straight_) return;
  for (int p = 0; p < world_size_; ++p) {
    if (!peer_world(p)) continue;
    PeerTx& t = tx_[static_cast<std::size_t>(p)];
    if (t.rail == rail) t.rail = -1;
    resend_to(p, rail);
  }
}

void PeerTransport::on_rail_draining(int rail) {
  // New pair traffic takes another rail at once: a header that overtakes
  // one still in the draining forwarder waits in the receiver's hold.
  for (auto& t : tx_)
    if (t.rail == rail) t.rail = -1;
}

void PeerTransport::on_rail_rejoined(int rail) {
  // Every rank of the job is connected to it again.
  for (auto& t : tx_) t.avoid &= ~(std::uint64_t{1} << rail);
}

void PeerTransport::on_link_failed() { up_.link_failed(); }

// ---- timers ----------------------------------------------------------------

void PeerTransport::tick() {
  if (straight_) return;
  pump_chunks();
  // Copies of empty messages count too (retained_bytes_ does not see them).
  if (ack_due_.empty() && acknowledged()) return;
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
  for (const auto& [key, s] : streams_)
    if (now - s->last_tx > resend_after_) stale.insert(key.first);
  for (int p : stale) resend_to(p, -1);
}

}  // namespace zipper::client
