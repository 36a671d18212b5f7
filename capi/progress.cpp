#include "progress.h"

#include <vector>

#include "../client/engine.h"
#include "../client/runtime.h"
#include "../collectives/schedule.h"

namespace zipper::capi {

namespace {

std::vector<client::RequestPtr> g_detached;
int g_persistent_active = 0;

bool reap_detached() {
  client::Runtime* rt = client::Runtime::get();
  if (rt == nullptr) return false;
  for (std::size_t i = 0; i < g_detached.size();) {
    if (!rt->engine().test(*g_detached[i])) {
      ++i;
      continue;
    }
    g_detached[i] = std::move(g_detached.back());
    g_detached.pop_back();
  }
  return !g_detached.empty();
}

bool progress_all() {
  const bool schedules = coll::Schedule::advance_all();
  const bool detached = reap_detached();
  return schedules || detached || g_persistent_active > 0;
}

}  // namespace

void join_progress() {
  // Once per runtime: the list belongs to it (one per MPI_Init).
  static client::Runtime* joined = nullptr;
  client::Runtime* rt = client::Runtime::get();
  if (rt == nullptr || rt == joined) return;
  joined = rt;
  rt->progress().add(&progress_all);
}

void note_persistent(int delta) { g_persistent_active += delta; }

void detach(client::RequestPtr r) {
  join_progress();
  g_detached.push_back(std::move(r));
}

bool active(MPI_Request h) {
  if (h == MPI_REQUEST_NULL) return false;
  const client::Request* r = peek(h);
  return !(r->progressable && r->progressable->inactive());
}

void empty_status(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  client::Request r;
  client::Engine::fill_status(r, st);
  // MPI-3.1 3.7.3: an empty status's error is MPI_SUCCESS (fill_status
  // leaves the field alone, as completion calls other than the multiple
  // ones must; MPICH pt2pt/rqstatus reads it after Request_get_status).
  st->MPI_ERROR = MPI_SUCCESS;
}

int collect(MPI_Request* h, MPI_Status* st) {
  client::Request& r = *peek(*h);
  client::Engine::fill_status(r, st);
  const int err = r.error;
  if (r.progressable && r.progressable->retire(r)) return err;
  take(h);  // frees it
  return err;
}

}  // namespace zipper::capi
