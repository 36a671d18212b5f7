// MPI_Iprobe, MPI_Improbe / MPI_Mrecv and MPI_Cancel on the
// engine's one matching queue (engine.h).
#include <mpi.h>

#include "engine.h"

namespace zipper::client {

// MPI_ERROR is left as it is: MPI-3.1 section 3.2.5 lets only the
// multiple-completion calls (Waitall, Testsome, ...) set it, and they do.
void Engine::fill_status(const Request& r, MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = r.status_source;
  st->MPI_TAG = r.status_tag;
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

int Engine::iprobe(const CommPtr& c, int source, int tag, bool* flag, MPI_Status* st,
                   bool progress_first) {
  std::lock_guard<std::recursive_mutex> g(mu_);
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
  if (progress_first) progress();
  // Pull native messages into the one queue so that a following receive with
  // the probed source and tag gets exactly the probed message.
  const bool any = source == MPI_ANY_SOURCE;
  if (any || c->map().is_local(source)) pull_native(*c);
  const Selector sel{any ? kAnySource : c->map().world(source), tag, c->p2p_context()};
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
                    MPI_Status* st, bool progress_first) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  out->reset();
  bool flag = false;
  if (source == MPI_PROC_NULL) return iprobe(c, source, tag, &flag, st);
  if (int rc = iprobe(c, source, tag, &flag, MPI_STATUS_IGNORE, progress_first)) return rc;
  if (!flag) return MPI_SUCCESS;
  const bool any = source == MPI_ANY_SOURCE;
  const Selector sel{any ? kAnySource : c->map().world(source), tag, c->p2p_context()};
  auto e = queue_.match_unexpected(sel);  // the one iprobe saw: nothing ran in between
  probe_status(c, e->env, e->msg, st);
  *out = std::make_unique<MatchedMessage>(MatchedMessage{c, e->env, std::move(e->msg)});
  return MPI_SUCCESS;
}

int Engine::mrecv(std::unique_ptr<MatchedMessage> m, void* buf, int count, MPI_Datatype type,
                  RequestPtr* out) {
  std::lock_guard<std::recursive_mutex> g(mu_);
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
  std::lock_guard<std::recursive_mutex> g(mu_);
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

}  // namespace zipper::client
