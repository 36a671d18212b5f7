// Frames from zipperd (every rail): EAGER and RTS headers matched in sequence
// order, CTS, rendezvous chunks; peers and rails that go away (engine.h).
#include <algorithm>
#include <cstring>

#include "engine.h"

namespace zipper::client {

using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

void Engine::stream_chunks(Request* s, std::uint64_t accepted) {
  const std::uint64_t n = std::min(accepted, s->send_bytes);
  if (n == 0) return complete(s, MPI_SUCCESS);
  const std::uint64_t chunk = rendezvous_chunk(n, rails_.chunk_size());
  s->chunks_left = static_cast<std::uint32_t>((n + chunk - 1) / chunk);
  // Every chunk is posted at once: credit, not a round trip, paces them, so
  // zipperd relays chunk i while chunk i+1 is on its way in.
  // The chunks share one owner token and the message as their extent: a verbs
  // link registers the message once (MR cache) instead of once per chunk. The
  // token dies with the last chunk, which invalidates that registration; the
  // user buffer itself stays borrowed until the request completes.
  const std::shared_ptr<void> token = std::make_shared<char>();
  const std::span<std::byte> message(s->send_data, n);
  for (std::uint64_t off = 0; off < n; off += chunk) {
    const std::uint64_t len = std::min(chunk, n - off);
    OutFrame f;
    f.hdr.type = FrameType::kChunk;
    f.hdr.dst = static_cast<std::uint32_t>(s->peer);
    f.hdr.seq = s->seq;
    f.hdr.msg_len = n;
    f.hdr.chunk_offset = off;
    f.payload = Payload{message.subspan(off, len), token, message};
    f.on_sent = [this, s] {
      if (--s->chunks_left == 0) complete(s, MPI_SUCCESS);
    };
    rails_.send(0, std::move(f));
  }
}

// ---------------------------------------------------------------------------
// Frames from zipperd

std::optional<Payload> Engine::payload_dest(int rail, const FrameHeader& h) {
  if (h.type == FrameType::kChunk) {
    auto it = rndv_recvs_.find({static_cast<int>(h.src), h.seq});
    if (it != rndv_recvs_.end()) {
      Request* r = it->second;
      if (h.chunk_offset + h.payload_len <= r->rndv_expected)
        return Payload::borrow(r->recv_dest() + h.chunk_offset, h.payload_len);
    }
  } else if (h.type == FrameType::kEager || h.type == FrameType::kRts) {
    // The envelope is complete once the header is in: match now, so the
    // payload can land in the user's buffer and no other path (a native
    // message for a wildcard receive) can claim that receive meanwhile.
    Request* r = match_header(rail, h);
    if (r && h.type == FrameType::kEager && r->layout.contiguous &&
        r->layout.bytes >= h.payload_len)
      return Payload::borrow(r->layout.base, h.payload_len);
  }
  return Payload::allocate(h.payload_len);
}

Request* Engine::match_header(int rail, const FrameHeader& h) {
  const auto ri = static_cast<std::size_t>(rail);
  header_match_[ri] = nullptr;
  header_order_[ri] = HeaderOrder::kInOrder;
  const int src = static_cast<int>(h.src);
  if (!valid_world(src) || is_local_world(src)) {
    fail_all("frame from invalid rank " + std::to_string(h.src));
    return nullptr;
  }
  auto& expect = next_recv_seq_[static_cast<std::size_t>(src)];
  if (h.seq != expect) {
    if (reliable_) {
      // Resent (a duplicate) or overtaking on another rail after a failover.
      header_order_[ri] = h.seq < expect ? HeaderOrder::kDuplicate : HeaderOrder::kEarly;
      return nullptr;
    }
    fail_all("message order violated from rank " + std::to_string(h.src) + ": sequence " +
             std::to_string(h.seq) + ", expected " + std::to_string(expect));
    return nullptr;
  }
  ++expect;
  if (auto r = queue_.match_posted(Envelope{src, h.tag, h.context_id})) {
    unposted(*r);
    header_match_[ri] = *r;
  }
  return header_match_[ri];
}

void Engine::accept_in_order(const FrameHeader& h, Payload payload, Request* r) {
  const Envelope env{static_cast<int>(h.src), h.tag, h.context_id};
  if (r == nullptr) {
    // A receive posted while this frame's payload was still arriving
    // (the header matched nothing then) must take it now: later frames
    // of this pair would otherwise claim that receive first and overtake.
    if (auto p = queue_.match_posted(env)) {
      unposted(*p);
      r = *p;
    }
  }
  if (r) {
    if (h.type == FrameType::kEager)
      deliver_bytes(r, env, payload.bytes.data(), payload.bytes.size());
    else
      begin_rendezvous_recv(r, env, h.seq, h.msg_len);
  } else {
    UnexpectedMsg m;
    m.kind = h.type == FrameType::kEager ? UnexpectedMsg::Kind::kEager : UnexpectedMsg::Kind::kRts;
    m.payload = std::move(payload);
    m.msg_len = h.msg_len;
    m.seq = h.seq;
    if (reliable_ && h.type == FrameType::kRts) unexpected_rts_.insert({env.src, h.seq});
    queue_.add_unexpected(env, std::move(m));
  }
  if (reliable_) header_arrived(env.src);
}

void Engine::on_data_frame(int rail, const FrameHeader& h, Payload payload) {
  const int src = static_cast<int>(h.src);
  switch (h.type) {
    case FrameType::kEager:
    case FrameType::kRts: {
      const auto ri = static_cast<std::size_t>(rail);
      Request* r = std::exchange(header_match_[ri], nullptr);
      switch (std::exchange(header_order_[ri], HeaderOrder::kInOrder)) {
        case HeaderOrder::kDuplicate:
          return on_duplicate(h);
        case HeaderOrder::kEarly:
          return hold(h, std::move(payload));
        case HeaderOrder::kInOrder:
          break;
      }
      if (!valid_world(src) || is_local_world(src)) return;  // failed in match_header
      accept_in_order(h, std::move(payload), r);
      if (reliable_) release_held(src);
      return;
    }
    case FrameType::kCts:
      if (!valid_world(src) || is_local_world(src))
        return fail_all("CTS from invalid rank " + std::to_string(h.src));
      if (reliable_ && h.flags == proto::kCtsAck) return on_ack(src, h.seq);
      if (reliable_ && h.flags == proto::kCtsFin) return on_fin(src, h.seq);
      if (reliable_) return on_cts(src, h);
      {
        auto it = rndv_sends_.find({src, h.seq});
        if (it == rndv_sends_.end())
          return fail_all("CTS for unknown message " + std::to_string(h.seq) + " from rank " +
                          std::to_string(h.src));
        Request* s = it->second;
        rndv_sends_.erase(it);
        return stream_chunks(s, h.msg_len);
      }
    case FrameType::kChunk:
      return on_chunk(h);
    default:
      return;
  }
}

void Engine::on_chunk(const FrameHeader& h) {
  const int src = static_cast<int>(h.src);
  auto it = rndv_recvs_.find({src, h.seq});
  if (it == rndv_recvs_.end() || h.chunk_offset + h.payload_len > it->second->rndv_expected) {
    // Over several rails, a resent chunk of a message already complete.
    if (reliable_ && it == rndv_recvs_.end() && valid_world(src) && !is_local_world(src) &&
        h.seq < next_recv_seq_[static_cast<std::size_t>(src)])
      return;
    return fail_all("unexpected rendezvous chunk from rank " + std::to_string(h.src));
  }
  Request* r = it->second;
  if (reliable_ && !r->chunks_got.insert(h.chunk_offset).second) return;  // resent: in already
  r->rndv_received += h.payload_len;
  if (r->rndv_received >= r->rndv_expected) {
    rndv_recvs_.erase(it);
    if (!r->layout.contiguous)
      unpack(r->staging.data(), r->rndv_expected, r->buf, r->count, r->type, r->comm->native());
    r->status_bytes = r->rndv_expected;
    r->chunks_got.clear();
    if (reliable_) send_fin(src, h.seq);
    complete(r, r->msg_len > r->layout.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
  }
}

void Engine::fail_all(const std::string& why) {
  // A protocol failure is the peer's or a forwarder's fault, never ours to
  // mend: every rail goes (MPI's default is to abort on wrong data).
  for (int i = 0; i < rails_.size(); ++i) rails_.fail_soon(i, why);
}

bool Engine::on_peer_gone(int rail, int vrank, const std::string& why) {
  if (!valid_world(vrank) || is_local_world(vrank)) return false;
  if (reliable_) {
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
  if (!dead_peers_.insert(vrank).second) return true;
  report("rank " + std::to_string(vrank) + " is gone (" + why +
         "); operations with it fail with MPI_ERR_OTHER");
  for (auto* pending : {&rndv_sends_, &rndv_recvs_}) {
    for (auto it = pending->begin(); it != pending->end();) {
      if (it->first.first == vrank) {
        complete(it->second, MPI_ERR_OTHER);
        it = pending->erase(it);
      } else {
        ++it;
      }
    }
  }
  if (reliable_) drop_peer_state(vrank);
  auto& posted = queue_.posted();
  for (auto it = posted.begin(); it != posted.end();) {
    if (it->sel.src == vrank) {
      unposted(it->recv);
      complete(it->recv, MPI_ERR_OTHER);
      it = posted.erase(it);
    } else {
      ++it;
    }
  }
  return true;
}

void Engine::on_rail_failed(int rail) {
  if (!reliable_) return;
  for (int p = 0; p < world_size_; ++p) {
    if (is_local_world(p)) continue;
    PeerTx& t = tx_[static_cast<std::size_t>(p)];
    if (t.rail == rail) t.rail = -1;
    resend_to(p, rail);
  }
}

void Engine::on_rail_draining(int rail) {
  // New pair traffic takes another rail at once: a header that overtakes
  // one still in the draining forwarder waits in the receiver's hold.
  for (auto& t : tx_)
    if (t.rail == rail) t.rail = -1;
}

void Engine::on_rail_rejoined(int rail) {
  // Every rank of the job is connected to it again.
  for (auto& t : tx_) t.avoid &= ~(std::uint64_t{1} << rail);
}

void Engine::on_link_failed() {
  link_lost_ = true;
  for (Request* s : std::set<Request*>(active_sends_)) complete(s, MPI_ERR_OTHER);
  rndv_sends_.clear();
  for (auto& [key, r] : rndv_recvs_) complete(r, MPI_ERR_OTHER);
  rndv_recvs_.clear();
  if (reliable_)
    for (int p = 0; p < world_size_; ++p) drop_peer_state(p);
  auto& posted = queue_.posted();
  for (auto it = posted.begin(); it != posted.end();) {
    const bool remote = it->sel.src == MPI_ANY_SOURCE ? !it->recv->comm->intra_cluster()
                                                      : !is_local_world(it->sel.src);
    if (remote) {
      unposted(it->recv);
      complete(it->recv, MPI_ERR_OTHER);
      it = posted.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace zipper::client
