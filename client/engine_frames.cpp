// What the delivery layer (peer_transport.h) hands up: EAGER and RTS frames
// in their pair's order, matched when their header is in; rendezvous
// receives and their chunks; peers and links that go away (engine.h).
#include <algorithm>
#include <cstring>

#include "engine.h"

namespace zipper::client {

using proto::FrameHeader;
using proto::FrameType;
using proto::Payload;

std::optional<Payload> Engine::header_in_order(int rail, const FrameHeader& h) {
  // The envelope is complete once the header is in: match now, so the
  // payload can land in the user's buffer and no other path (a native
  // message for a wildcard receive) can claim that receive meanwhile.
  Request* r = nullptr;
  if (auto p = queue_.match_posted(Envelope{static_cast<int>(h.src), h.tag, h.context_id})) {
    unposted(*p);
    r = *p;
  }
  header_match_[static_cast<std::size_t>(rail)] = r;
  if (r && h.type == FrameType::kEager && r->layout.contiguous && r->layout.bytes >= h.payload_len)
    return Payload::borrow(r->layout.base, h.payload_len);
  return std::nullopt;
}

void Engine::message_in_order(int rail, const FrameHeader& h, Payload payload) {
  Request* r =
      rail >= 0 ? std::exchange(header_match_[static_cast<std::size_t>(rail)], nullptr) : nullptr;
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
    return;
  }
  UnexpectedMsg m;
  m.kind = h.type == FrameType::kEager ? UnexpectedMsg::Kind::kEager : UnexpectedMsg::Kind::kRts;
  m.payload = std::move(payload);
  m.msg_len = h.msg_len;
  m.seq = h.seq;
  if (h.type == FrameType::kRts) unexpected_rts_.insert({env.src, h.seq});
  queue_.add_unexpected(env, std::move(m));
}

std::optional<Payload> Engine::chunk_dest(const FrameHeader& h) {
  auto it = rndv_recvs_.find({static_cast<int>(h.src), h.seq});
  if (it == rndv_recvs_.end() || h.chunk_offset + h.payload_len > it->second->rndv_expected)
    return std::nullopt;
  return Payload::borrow(it->second->recv_dest() + h.chunk_offset, h.payload_len);
}

bool Engine::chunk_in(const FrameHeader& h) {
  auto it = rndv_recvs_.find({static_cast<int>(h.src), h.seq});
  if (it == rndv_recvs_.end() || h.chunk_offset + h.payload_len > it->second->rndv_expected) {
    fail_all("unexpected rendezvous chunk from rank " + std::to_string(h.src));
    return false;
  }
  Request* r = it->second;
  r->rndv_received += h.payload_len;
  if (r->rndv_received < r->rndv_expected) return false;
  rndv_recvs_.erase(it);
  if (!r->layout.contiguous)
    unpack(r->staging.data(), r->rndv_expected, r->buf, r->count, r->type, r->comm->native());
  r->status_bytes = r->rndv_expected;
  complete(r, r->msg_len > r->layout.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
  return true;
}

RtsState Engine::rts_state(int src, std::uint64_t seq, std::uint64_t* accepted) {
  if (auto it = rndv_recvs_.find({src, seq}); it != rndv_recvs_.end()) {
    *accepted = it->second->rndv_expected;
    return RtsState::kArriving;
  }
  return unexpected_rts_.count({src, seq}) ? RtsState::kUnexpected : RtsState::kDone;
}

void Engine::fail_all(const std::string& why) {
  // A protocol failure is the peer's or a forwarder's fault, never ours to
  // mend: every rail goes (MPI's default is to abort on wrong data).
  for (int i = 0; i < rails_.size(); ++i) rails_.fail_soon(i, why);
}

void Engine::peer_gone(int vrank, const std::string& why) {
  if (!dead_peers_.insert(vrank).second) return;
  report("rank " + std::to_string(vrank) + " is gone (" + why +
         "); operations with it fail with MPI_ERR_OTHER");
  for (Request* s : transport_.drop_peer(vrank)) complete(s, MPI_ERR_OTHER);
  for (auto it = rndv_recvs_.begin(); it != rndv_recvs_.end();) {
    if (it->first.first == vrank) {
      complete(it->second, MPI_ERR_OTHER);
      it = rndv_recvs_.erase(it);
    } else {
      ++it;
    }
  }
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
}

void Engine::link_failed() {
  link_lost_ = true;
  for (Request* s : std::set<Request*>(active_sends_)) complete(s, MPI_ERR_OTHER);
  transport_.drop_all();
  for (auto& [key, r] : rndv_recvs_) complete(r, MPI_ERR_OTHER);
  rndv_recvs_.clear();
  auto& posted = queue_.posted();
  for (auto it = posted.begin(); it != posted.end();) {
    const bool remote =
        it->sel.src == kAnySource ? !it->recv->comm->intra_cluster() : !is_local_world(it->sel.src);
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
