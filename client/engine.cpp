#include "engine.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace zipper::client {

static_assert(kAnySource == MPI_ANY_SOURCE && kAnyTag == MPI_ANY_TAG,
              "match_queue.h wildcards must equal Open MPI's");

using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

Engine::Engine(Channel& channel, int rank, int world_size, int local_lo, int local_hi,
               int spin_rounds)
    : channel_(channel),
      rank_(rank),
      world_size_(world_size),
      local_lo_(local_lo),
      local_hi_(local_hi),
      spin_rounds_(spin_rounds),
      next_send_seq_(static_cast<std::size_t>(world_size), 0),
      next_recv_seq_(static_cast<std::size_t>(world_size), 0) {}

Engine::~Engine() = default;

void Engine::report(const std::string& msg) const {
  std::fprintf(stderr, "mmpi[rank %d]: %s\n", rank_, msg.c_str());
  std::fflush(stderr);
}

RequestPtr Engine::start(const CommPtr& c) {
  auto r = std::make_unique<Request>();
  r->comm = c;
  return r;
}

// ---------------------------------------------------------------------------
// Sending

int Engine::isend(const CommPtr& c, Traffic tr, const void* buf, int count, MPI_Datatype type,
                  int dest, int tag, RequestPtr* out, SendMode mode) {
  *out = start(c);
  Request* r = out->get();
  if (dest == MPI_PROC_NULL) {
    r->complete = true;
    return MPI_SUCCESS;
  }
  if (dest < 0 || dest >= c->size()) return complete(r, MPI_ERR_RANK), MPI_ERR_RANK;
  if (tag < 0) return complete(r, MPI_ERR_TAG), MPI_ERR_TAG;
  const RankMap& m = c->map();
  if (m.is_local(dest)) {
    r->kind = RequestKind::kNative;
    const MPI_Comm nc = tr == Traffic::kCollective ? c->native_coll() : c->native();
    const int nd = m.index_in_cluster(dest);
    const int rc = mode == SendMode::kSynchronous
                       ? MPI_Issend(buf, count, type, nd, tag, nc, &r->native)
                       : MPI_Isend(buf, count, type, nd, tag, nc, &r->native);
    if (rc != MPI_SUCCESS) complete(r, rc);
    return rc;
  }
  const int wdest = m.world(dest);
  int rc = describe(buf, count, type, &r->layout);
  if (rc != MPI_SUCCESS) return complete(r, rc), rc;
  // The channel or on_peer_gone reported the failure once already: no line per call.
  if (!channel_.up() || dead_peers_.count(wdest)) return complete(r, MPI_ERR_OTHER), MPI_ERR_OTHER;
  r->kind = RequestKind::kSend;
  r->peer = wdest;
  r->send_bytes = r->layout.bytes;
  if (r->layout.contiguous) {
    r->send_data = r->layout.base;
  } else {
    rc = pack(buf, count, type, c->native(), &r->send_pack);
    if (rc != MPI_SUCCESS) return complete(r, rc), rc;
    r->send_data = r->send_pack.data();
    r->send_bytes = r->send_pack.size();
  }
  r->seq = next_send_seq_[static_cast<std::size_t>(wdest)]++;
  OutFrame f;
  f.hdr.dst = static_cast<std::uint32_t>(wdest);
  f.hdr.tag = tag;
  f.hdr.context_id = tr == Traffic::kCollective ? c->coll_context() : c->p2p_context();
  f.hdr.seq = r->seq;
  f.hdr.msg_len = r->send_bytes;
  active_sends_.insert(r);
  if (r->send_bytes <= channel_.eager_limit() && mode == SendMode::kStandard) {
    f.hdr.type = FrameType::kEager;
    f.payload = Payload::borrow(r->send_data, r->send_bytes);
    f.on_sent = [this, r] { complete(r, MPI_SUCCESS); };
  } else {
    f.hdr.type = FrameType::kRts;
    rndv_sends_[{wdest, r->seq}] = r;
  }
  channel_.send(std::move(f));
  channel_.flush();
  return MPI_SUCCESS;
}

void Engine::stream_chunks(Request* s, std::uint64_t accepted) {
  const std::uint64_t n = std::min(accepted, s->send_bytes);
  if (n == 0) return complete(s, MPI_SUCCESS);
  const std::uint64_t chunk = rendezvous_chunk(n, channel_.chunk_size());
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
    channel_.send(std::move(f));
  }
}

// ---------------------------------------------------------------------------
// Receiving and matching

int Engine::irecv(const CommPtr& c, Traffic tr, void* buf, int count, MPI_Datatype type, int source,
                  int tag, RequestPtr* out) {
  *out = start(c);
  Request* r = out->get();
  r->buf = buf;
  r->count = count;
  r->type = type;
  if (source == MPI_PROC_NULL) {
    r->status_source = MPI_PROC_NULL;
    r->complete = true;
    return MPI_SUCCESS;
  }
  if (source != MPI_ANY_SOURCE && (source < 0 || source >= c->size()))
    return complete(r, MPI_ERR_RANK), MPI_ERR_RANK;
  if (tag < 0 && tag != MPI_ANY_TAG) return complete(r, MPI_ERR_TAG), MPI_ERR_TAG;
  int rc = describe(buf, count, type, &r->layout);
  if (rc != MPI_SUCCESS) return complete(r, rc), rc;
  const RankMap& m = c->map();
  const bool coll = tr == Traffic::kCollective;
  const bool any = source == MPI_ANY_SOURCE;
  r->kind = RequestKind::kRecv;
  r->peer = any ? MPI_ANY_SOURCE : m.world(source);
  if (coll && (any || tag == MPI_ANY_TAG))
    return complete(r, MPI_ERR_INTERN), MPI_ERR_INTERN;  // collectives never use wildcards
  if (coll && m.is_local(source)) {
    r->kind = RequestKind::kNative;
    rc = MPI_Irecv(buf, count, type, m.index_in_cluster(source), tag, c->native_coll(), &r->native);
    if (rc != MPI_SUCCESS) complete(r, rc);
    return rc;
  }
  const Selector sel{r->peer, tag, coll ? c->coll_context() : c->p2p_context()};
  const bool native_possible = !coll && (any || m.is_local(source));

  auto um = queue_.match_unexpected(sel);
  if (!um && native_possible) {
    // Fast path: no earlier wildcard receive can claim this message, so Open
    // MPI's own matching gives the right order.
    const auto it = native_eligible_.find(c.get());
    if (!any && (it == native_eligible_.end() || it->second == 0)) {
      r->kind = RequestKind::kNative;
      rc = MPI_Irecv(buf, count, type, m.index_in_cluster(source), tag, c->native(), &r->native);
      if (rc != MPI_SUCCESS) complete(r, rc);
      return rc;
    }
    pull_native(*c);
    um = queue_.match_unexpected(sel);
  }
  if (um) {
    deliver(r, um->env, std::move(um->msg));
    return MPI_SUCCESS;
  }
  // Reported once already (channel, on_peer_gone). A wildcard receive on a
  // communicator with members across the lost link fails too: its sender
  // may be one of them, and it must not hang.
  if ((!native_possible && (!channel_.up() || dead_peers_.count(r->peer))) ||
      (any && link_lost() && !c->intra_cluster()))
    return complete(r, MPI_ERR_OTHER), MPI_ERR_OTHER;
  post_recv(r, sel, native_possible);
  return MPI_SUCCESS;
}

void Engine::post_recv(Request* r, const Selector& sel, bool native_eligible) {
  queue_.post(sel, r);
  r->native_eligible = native_eligible;
  if (native_eligible) {
    ++native_eligible_[r->comm.get()];
    ++native_eligible_total_;
  }
}

// `r` left the posted list (matched, cancelled or failed).
void Engine::unposted(Request* r) {
  if (!r->native_eligible) return;
  r->native_eligible = false;
  --native_eligible_total_;
  auto it = native_eligible_.find(r->comm.get());
  if (--it->second == 0) native_eligible_.erase(it);
}

void Engine::pull_native(const Comm& c) {
  const RankMap& m = c.map();
  for (;;) {
    int flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c.native(), &flag, &msg, &st) != MPI_SUCCESS ||
        !flag)
      return;
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    const Envelope env{m.world(m.local_members()[static_cast<std::size_t>(st.MPI_SOURCE)]),
                       st.MPI_TAG, c.p2p_context()};
    UnexpectedMsg um;
    um.kind = UnexpectedMsg::Kind::kNative;
    um.native = msg;
    um.msg_len = static_cast<std::uint64_t>(bytes);
    if (auto r = queue_.match_posted(env)) {
      unposted(*r);
      deliver(*r, env, std::move(um));
    } else {
      queue_.add_unexpected(env, std::move(um));
    }
  }
}

void Engine::deliver(Request* r, const Envelope& env, UnexpectedMsg&& m) {
  switch (m.kind) {
    case UnexpectedMsg::Kind::kNative: {
      // The status's source comes from the native status in test().
      const int rc = MPI_Imrecv(r->buf, r->count, r->type, &m.native, &r->native);
      if (rc != MPI_SUCCESS) complete(r, rc);
      return;
    }
    case UnexpectedMsg::Kind::kEager:
      return deliver_bytes(r, env, m.payload.bytes.data(), m.payload.bytes.size());
    case UnexpectedMsg::Kind::kRts:
      return begin_rendezvous_recv(r, env, m.seq, m.msg_len);
  }
}

void Engine::deliver_bytes(Request* r, const Envelope& env, const std::byte* data,
                           std::uint64_t n) {
  const std::uint64_t got = std::min(n, r->layout.bytes);
  if (r->layout.contiguous) {
    if (got > 0 && data != r->layout.base) std::memcpy(r->layout.base, data, got);
  } else {
    unpack(data, got, r->buf, r->count, r->type, r->comm->native());
  }
  r->status_source = r->comm->map().rank_of_world(env.src);
  r->status_tag = env.tag;
  r->status_bytes = got;
  complete(r, n > r->layout.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
}

void Engine::begin_rendezvous_recv(Request* r, const Envelope& env, std::uint64_t seq,
                                   std::uint64_t msg_len) {
  r->status_source = r->comm->map().rank_of_world(env.src);
  r->status_tag = env.tag;
  r->peer = env.src;
  r->msg_len = msg_len;
  r->seq = seq;
  r->rndv_expected = std::min(msg_len, r->layout.bytes);
  r->rndv_received = 0;
  if (!r->layout.contiguous) r->staging.resize(r->rndv_expected);
  // CTS says how many bytes we accept: a truncating receive never pulls more.
  OutFrame cts;
  cts.hdr.type = FrameType::kCts;
  cts.hdr.dst = static_cast<std::uint32_t>(env.src);
  cts.hdr.tag = env.tag;
  cts.hdr.seq = seq;
  cts.hdr.msg_len = r->rndv_expected;
  channel_.send(std::move(cts));
  if (r->rndv_expected == 0) {
    r->status_bytes = 0;
    return complete(r, msg_len > 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
  }
  rndv_recvs_[{env.src, seq}] = r;
}

void Engine::complete(Request* r, int error) {
  r->error = error;
  r->complete = true;
  if (r->kind == RequestKind::kSend) active_sends_.erase(r);
}

// ---------------------------------------------------------------------------
// Frames from zipperd

std::optional<Payload> Engine::payload_dest(const FrameHeader& h) {
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
    Request* r = match_header(h);
    if (r && h.type == FrameType::kEager && r->layout.contiguous &&
        r->layout.bytes >= h.payload_len)
      return Payload::borrow(r->layout.base, h.payload_len);
  }
  return Payload::allocate(h.payload_len);
}

Request* Engine::match_header(const FrameHeader& h) {
  header_match_ = nullptr;
  const int src = static_cast<int>(h.src);
  if (!valid_world(src) || is_local_world(src)) {
    channel_.fail_soon("frame from invalid rank " + std::to_string(h.src));
    return nullptr;
  }
  auto& expect = next_recv_seq_[static_cast<std::size_t>(src)];
  if (h.seq != expect) {
    channel_.fail_soon("message order violated from rank " + std::to_string(h.src) + ": sequence " +
                       std::to_string(h.seq) + ", expected " + std::to_string(expect));
    return nullptr;
  }
  ++expect;
  if (auto r = queue_.match_posted(Envelope{src, h.tag, h.context_id})) {
    unposted(*r);
    header_match_ = *r;
  }
  return header_match_;
}

void Engine::on_data_frame(const FrameHeader& h, Payload payload) {
  const Envelope env{static_cast<int>(h.src), h.tag, h.context_id};
  switch (h.type) {
    case FrameType::kEager:
    case FrameType::kRts: {
      Request* r = std::exchange(header_match_, nullptr);
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
        m.kind =
            h.type == FrameType::kEager ? UnexpectedMsg::Kind::kEager : UnexpectedMsg::Kind::kRts;
        m.payload = std::move(payload);
        m.msg_len = h.msg_len;
        m.seq = h.seq;
        queue_.add_unexpected(env, std::move(m));
      }
      return;
    }
    case FrameType::kCts: {
      auto it = rndv_sends_.find({env.src, h.seq});
      if (it == rndv_sends_.end())
        return channel_.fail_soon("CTS for unknown message " + std::to_string(h.seq) +
                                  " from rank " + std::to_string(h.src));
      Request* s = it->second;
      rndv_sends_.erase(it);
      return stream_chunks(s, h.msg_len);
    }
    case FrameType::kChunk: {
      auto it = rndv_recvs_.find({env.src, h.seq});
      if (it == rndv_recvs_.end() || h.chunk_offset + h.payload_len > it->second->rndv_expected)
        return channel_.fail_soon("unexpected rendezvous chunk from rank " + std::to_string(h.src));
      Request* r = it->second;
      r->rndv_received += h.payload_len;
      if (r->rndv_received >= r->rndv_expected) {
        rndv_recvs_.erase(it);
        if (!r->layout.contiguous)
          unpack(r->staging.data(), r->rndv_expected, r->buf, r->count, r->type, r->comm->native());
        r->status_bytes = r->rndv_expected;
        complete(r, r->msg_len > r->layout.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
      }
      return;
    }
    default:
      return;
  }
}

bool Engine::on_peer_gone(int vrank, const std::string& why) {
  if (!valid_world(vrank) || is_local_world(vrank)) return false;
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

void Engine::on_link_failed() {
  link_lost_ = true;
  for (Request* s : std::set<Request*>(active_sends_)) complete(s, MPI_ERR_OTHER);
  rndv_sends_.clear();
  for (auto& [key, r] : rndv_recvs_) complete(r, MPI_ERR_OTHER);
  rndv_recvs_.clear();
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

// ---------------------------------------------------------------------------
// Progress and completion

void Engine::progress() {
  channel_.progress(*this);
  if (native_eligible_total_ > 0) {
    // pull_native may deliver and so change the map: walk a copy of the keys.
    std::vector<const Comm*> comms;
    for (const auto& [c, n] : native_eligible_) comms.push_back(c);
    for (const Comm* c : comms) pull_native(*c);
  }
  if (!released_.empty())
    std::erase_if(released_, [this](RequestPtr& r) { return poll_native(*r); });
  if (progress_hook_ != nullptr && !in_hook_) {
    in_hook_ = true;
    hook_active_ = progress_hook_();
    in_hook_ = false;
  }
}

bool Engine::test(Request& r) {
  if (!r.complete) progress();
  if (r.kind == RequestKind::kProgressable && !r.complete) r.complete = r.progressable->poll(r);
  return poll_native(r);
}

bool Engine::poll_native(Request& r) {
  if (!r.complete && r.native != MPI_REQUEST_NULL) {
    int flag = 0;
    MPI_Status st;
    const int rc = MPI_Test(&r.native, &flag, &st);
    if (flag || rc != MPI_SUCCESS) {
      if (r.kind == RequestKind::kNative || r.kind == RequestKind::kRecv) {
        if (st.MPI_SOURCE != MPI_PROC_NULL && st.MPI_SOURCE != MPI_ANY_SOURCE && r.comm)
          r.status_source = r.comm->map().local_members()[static_cast<std::size_t>(st.MPI_SOURCE)];
        r.status_tag = st.MPI_TAG;
        int bytes = 0;
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        r.status_bytes = static_cast<std::uint64_t>(bytes < 0 ? 0 : bytes);
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        r.cancelled = cancelled != 0;
      }
      r.error = rc;
      r.complete = true;
    }
  }
  return r.complete;
}

void Engine::wait_until(const std::function<bool()>& pred, bool native_active) {
  for (int spins = 0; !pred(); ++spins) {
    if (spins < spin_rounds_) {
      // Spinning holds a core that zipperd (on the same node in tests, or the
      // peer's progress) may need: yield it between rounds.
      sched_yield();
      continue;
    }
    // Idle: sleep on the link (zipperd traffic wakes us at once) but come back
    // quickly for native progress, which has no file descriptor to wait on.
    const bool native =
        native_active || native_eligible_total_ > 0 || !released_.empty() || hook_active_;
    if (channel_.up()) {
      pollfd p{channel_.poll_fd(),
               static_cast<short>(POLLIN | (channel_.send_pending() ? POLLOUT : 0)), 0};
      poll(&p, 1, native ? 0 : 1);
      if (native) sched_yield();
    } else {
      sched_yield();
    }
  }
}

void Engine::fill_status(const Request& r, MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = r.status_source;
  st->MPI_TAG = r.status_tag;
  st->MPI_ERROR = r.error;
  MPI_Status_set_elements_x(st, MPI_BYTE, static_cast<MPI_Count>(r.status_bytes));
  MPI_Status_set_cancelled(st, r.cancelled ? 1 : 0);
}

namespace {
void probe_status(const CommPtr& c, const Envelope& env, const UnexpectedMsg& m, MPI_Status* st) {
  Request r;
  r.status_source = c->map().rank_of_world(env.src);
  r.status_tag = env.tag;
  r.status_bytes = m.kind == UnexpectedMsg::Kind::kEager ? m.payload.bytes.size() : m.msg_len;
  Engine::fill_status(r, st);
}
}  // namespace

int Engine::iprobe(const CommPtr& c, int source, int tag, bool* flag, MPI_Status* st) {
  *flag = false;
  if (source == MPI_PROC_NULL) {
    *flag = true;
    Request r;
    r.status_source = MPI_PROC_NULL;
    fill_status(r, st);
    return MPI_SUCCESS;
  }
  if (source != MPI_ANY_SOURCE && (source < 0 || source >= c->size())) return MPI_ERR_RANK;
  if (tag < 0 && tag != MPI_ANY_TAG) return MPI_ERR_TAG;
  progress();
  // Pull native messages into the one queue so that a following receive with
  // the probed source and tag gets exactly the probed message.
  const bool any = source == MPI_ANY_SOURCE;
  if (any || c->map().is_local(source)) pull_native(*c);
  const Selector sel{any ? MPI_ANY_SOURCE : c->map().world(source), tag, c->p2p_context()};
  if (const auto* e = queue_.peek_unexpected(sel)) {
    *flag = true;
    probe_status(c, e->env, e->msg, st);
    return MPI_SUCCESS;
  }
  // Nothing can come any more from across a lost link or from a dead rank:
  // an error, so that a blocking probe does not wait forever.
  const bool remote = any ? !c->intra_cluster() : !c->map().is_local(source);
  if (remote && (link_lost() || (!any && dead_peers_.count(sel.src)))) return MPI_ERR_OTHER;
  return MPI_SUCCESS;
}

int Engine::improbe(const CommPtr& c, int source, int tag, std::unique_ptr<MatchedMessage>* out,
                    MPI_Status* st) {
  out->reset();
  bool flag = false;
  if (source == MPI_PROC_NULL) return iprobe(c, source, tag, &flag, st);
  if (int rc = iprobe(c, source, tag, &flag, MPI_STATUS_IGNORE)) return rc;
  if (!flag) return MPI_SUCCESS;
  const bool any = source == MPI_ANY_SOURCE;
  const Selector sel{any ? MPI_ANY_SOURCE : c->map().world(source), tag, c->p2p_context()};
  auto e = queue_.match_unexpected(sel);  // the one iprobe saw: nothing ran in between
  probe_status(c, e->env, e->msg, st);
  *out = std::make_unique<MatchedMessage>(MatchedMessage{c, e->env, std::move(e->msg)});
  return MPI_SUCCESS;
}

int Engine::mrecv(std::unique_ptr<MatchedMessage> m, void* buf, int count, MPI_Datatype type,
                  RequestPtr* out) {
  *out = start(m->comm);
  Request* r = out->get();
  r->buf = buf;
  r->count = count;
  r->type = type;
  r->kind = RequestKind::kRecv;
  if (int rc = describe(buf, count, type, &r->layout)) return complete(r, rc), rc;
  deliver(r, m->env, std::move(m->msg));
  return MPI_SUCCESS;
}

bool Engine::cancel(Request& r) {
  if (r.complete || r.kind != RequestKind::kRecv) {
    // A native receive Open MPI may still cancel; sends are never cancelled.
    if (!r.complete && r.kind == RequestKind::kNative && r.native != MPI_REQUEST_NULL)
      return MPI_Cancel(&r.native) == MPI_SUCCESS;
    return false;
  }
  if (!queue_.remove_posted(&r)) return false;  // matched already: it will complete
  unposted(&r);
  r.cancelled = true;
  r.status_source = MPI_ANY_SOURCE;
  r.status_tag = MPI_ANY_TAG;
  r.status_bytes = 0;
  complete(&r, MPI_SUCCESS);
  return true;
}

void Engine::release(RequestPtr r) {
  if (!r->complete) released_.push_back(std::move(r));
}

}  // namespace zipper::client
