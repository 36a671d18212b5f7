#include "engine.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace zipper::client {

// The match queue's wildcards are its own (MPI_ANY_SOURCE is -1 in Open MPI,
// -2 in MPICH): receives and probes translate MPI_ANY_SOURCE to kAnySource.
static_assert(kAnyTag == MPI_ANY_TAG, "match_queue.h's kAnyTag must equal MPI_ANY_TAG");

using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

Engine::Engine(Rails& rails, ProgressList& progress, int rank, const SiteMap& sites,
               int spin_rounds, std::uint64_t retransmit_bytes, int forwarder_timeout_ms)
    : rails_(rails),
      sites_(sites),
      rank_(rank),
      spin_rounds_(spin_rounds),
      transport_(rails, *this, rank, sites, retransmit_bytes, forwarder_timeout_ms),
      header_match_(static_cast<std::size_t>(std::max(rails.size(), 1)), nullptr),
      progress_(progress),
      round_(progress.add(
          [this] {
            own_round();
            return false;  // waits see the engine's own work (wait_until)
          },
          true)) {
  progress_.set_guard(&mu_);
}

Engine::~Engine() {
  progress_.remove(round_);
  progress_.set_guard(nullptr);
}

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
  std::lock_guard<std::recursive_mutex> g(mu_);
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
    const bool coll = tr == Traffic::kCollective;
    const MPI_Comm nc = coll ? c->native_coll() : c->native();
    const int nd = coll ? m.index_in_cluster(dest) : c->native_rank(dest);
    const int rc = mode == SendMode::kSynchronous
                       ? MPI_Issend(buf, count, type, nd, tag, nc, &r->native)
                       : MPI_Isend(buf, count, type, nd, tag, nc, &r->native);
    if (rc != MPI_SUCCESS) {
      complete(r, rc);
    } else if (profile_ != nullptr) [[unlikely]] {
      int size = 0;
      MPI_Type_size(type, &size);
      profile_->sent(m.world(dest), static_cast<std::uint64_t>(count) *
                                        static_cast<std::uint64_t>(std::max(size, 0)));
    }
    return rc;
  }
  const int wdest = m.world(dest);
  int rc = describe(buf, count, type, &r->layout);
  if (rc != MPI_SUCCESS) return complete(r, rc), rc;
  // The rails or on_peer_gone reported the failure once already: no line per call.
  if (!rails_.up() || dead_peers_.count(wdest)) return complete(r, MPI_ERR_OTHER), MPI_ERR_OTHER;
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
  r->seq = transport_.next_seq(wdest);
  const std::uint32_t context = tr == Traffic::kCollective ? c->coll_context() : c->p2p_context();
  active_sends_.insert(r);
  if (r->send_bytes <= rails_.eager_limit() && mode == SendMode::kStandard &&
      transport_.may_send_eager(r->send_bytes)) {
    OutFrame f;
    f.hdr.type = FrameType::kEager;
    f.hdr.dst = static_cast<std::uint32_t>(wdest);
    f.hdr.tag = tag;
    f.hdr.context_id = context;
    f.hdr.seq = r->seq;
    f.hdr.msg_len = r->send_bytes;
    f.payload = Payload::borrow(r->send_data, r->send_bytes);
    transport_.send_eager(std::move(f), r);
  } else {
    SendStream& s = r->stream;
    s.owner = r;
    s.peer = wdest;
    s.seq = r->seq;
    s.tag = tag;
    s.context = context;
    s.data = r->send_data;
    s.bytes = r->send_bytes;
    transport_.send_rts(&s);
  }
  if (profile_ != nullptr) [[unlikely]]
    profile_->sent(wdest, r->send_bytes);
  rails_.flush();
  return MPI_SUCCESS;
}

// ---------------------------------------------------------------------------
// Receiving and matching

int Engine::irecv(const CommPtr& c, Traffic tr, void* buf, int count, MPI_Datatype type, int source,
                  int tag, RequestPtr* out) {
  std::lock_guard<std::recursive_mutex> g(mu_);
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
  r->peer = any ? kAnySource : m.world(source);
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
      rc = MPI_Irecv(buf, count, type, c->native_rank(source), tag, c->native(), &r->native);
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
  if ((!native_possible && (!rails_.up() || dead_peers_.count(r->peer))) ||
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
    // _x: a message of 2 GiB and more has no int byte count.
    MPI_Count bytes = 0;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    const Envelope env{m.world(c.rank_of_native(st.MPI_SOURCE)), st.MPI_TAG, c.p2p_context()};
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
      unexpected_rts_.erase({env.src, m.seq});
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
  transport_.send_cts(env.src, env.tag, seq, r->rndv_expected);
  if (r->rndv_expected == 0) {
    r->status_bytes = 0;
    transport_.rendezvous_received(env.src, seq);
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
// Progress and completion

void Engine::own_round() {
  rails_.progress(transport_);
  transport_.tick();
  if (native_eligible_total_ > 0) {
    // pull_native may deliver and so change the map: walk a copy of the keys.
    std::vector<const Comm*> comms;
    for (const auto& [c, n] : native_eligible_) comms.push_back(c);
    for (const Comm* c : comms) pull_native(*c);
  }
}

void Engine::close() {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (transport_.acknowledging() && rails_.up()) {
    // What this rank sent must be acknowledged before its rails close: a
    // rail that fails now could otherwise take the last copy with it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (rails_.up() && !transport_.acknowledged() &&
           std::chrono::steady_clock::now() < deadline) {
      progress();
      rails_.poll_fds(&pollfds_);
      poll(pollfds_.data(), pollfds_.size(), 1);
    }
    if (rails_.up() && !transport_.acknowledged())
      report("finalize: messages still unacknowledged after 30 s; closing anyway");
    transport_.send_due_acks();
    rails_.flush();
  }
  rails_.close();
}

bool Engine::test(Request& r) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!r.complete) progress();
  if (r.kind == RequestKind::kProgressable && !r.complete) r.complete = r.progressable->poll(r);
  return poll_native(r);
}

bool Engine::poll_native(Request& r) {
  if (!r.complete && r.native != MPI_REQUEST_NULL) {
    int flag = 0;
    // MPICH leaves a completed send's status as it was: start from an empty
    // one (no source, no bytes), which a receive's completion overwrites.
    MPI_Status st;
    st.MPI_SOURCE = MPI_PROC_NULL;
    st.MPI_TAG = MPI_ANY_TAG;
    st.MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements_x(&st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(&st, 0);
    const int rc = MPI_Test(&r.native, &flag, &st);
    if (flag || rc != MPI_SUCCESS) {
      if (r.kind == RequestKind::kNative || r.kind == RequestKind::kRecv) {
        if (st.MPI_SOURCE != MPI_PROC_NULL && st.MPI_SOURCE != MPI_ANY_SOURCE && r.comm)
          r.status_source = r.comm->rank_of_native(st.MPI_SOURCE);
        r.status_tag = st.MPI_TAG;
        MPI_Count bytes = 0;
        MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
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
  std::lock_guard<std::recursive_mutex> g(mu_);
  for (int spins = 0; !pred(); ++spins) {
    // Over several rails the delivery layer owes its peers acknowledgements
    // and chunks even while this wait is only on native requests; a wait on
    // native requests alone (a collective's native step) must still complete
    // inter-cluster sends matched by this rank's posted receives; and an RMA
    // target (rma_window.h) answers origins whatever this wait is for.
    if (native_active || transport_.acknowledging() || progress_.serving()) progress();
    if (spins < spin_rounds_) {
      // Spinning holds a core that zipperd (on the same node in tests, or the
      // peer's progress) may need: yield it between rounds.
      sched_yield();
      continue;
    }
    // Idle: sleep on the link (zipperd traffic wakes us at once) but come back
    // quickly for native progress, which has no file descriptor to wait on.
    const bool native = native_active || native_eligible_total_ > 0 || progress_.busy();
    rails_.poll_fds(&pollfds_);
    if (!pollfds_.empty()) {
      poll(pollfds_.data(), pollfds_.size(), native ? 0 : 1);
      if (native) sched_yield();
    } else {
      sched_yield();
    }
  }
}

}  // namespace zipper::client
