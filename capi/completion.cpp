// Completion of one, all, any or some of an array of requests, status
// without completion, and freeing a request (MPI-3.1 3.7.3-3.7.5): Wait,
// Test, Waitall, Testall, Waitany, Testany, Waitsome, Testsome,
// Request_get_status and Request_free, on the request engine
// (client/engine.h).
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>

#include "../client/engine.h"
#include "../client/runtime.h"
#include "../collectives/schedule.h"
#include "coll_checks.h"
#include "handles.h"
#include "progress.h"

using zipper::client::Engine;
using zipper::client::Request;
using zipper::client::Runtime;
using namespace zipper::capi;

namespace {

// True when some request waits on native Open MPI progress (no fd to sleep on).
bool any_native(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL && peek(requests[i])->native != MPI_REQUEST_NULL)
      return true;
  return false;
}

// Collects every completed active request of the array (Testsome/Waitsome).
int collect_some(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  Runtime* rt = Runtime::get();
  bool any_error = false;
  *outcount = 0;
  for (int i = 0; i < incount; ++i) {
    if (!active(requests[i]) || !rt->engine().test(*peek(requests[i]))) continue;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[*outcount];
    const int err = collect(&requests[i], st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
    any_error |= err != MPI_SUCCESS;
    indices[(*outcount)++] = i;
  }
  return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

bool none_active(int count, const MPI_Request requests[]) {
  for (int i = 0; i < count; ++i)
    if (active(requests[i])) return false;
  return true;
}

}  // namespace

extern "C" {

int mmpi_impl_Testany(int count, MPI_Request requests[], int* index, int* flag,
                      MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  *index = MPI_UNDEFINED;
  if (none_active(count, requests)) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  *flag = 0;
  for (int i = 0; i < count; ++i) {
    if (active(requests[i]) && rt->engine().test(*peek(requests[i]))) {
      *flag = 1;
      *index = i;
      return collect(&requests[i], status);
    }
  }
  return MPI_SUCCESS;
}

int mmpi_impl_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                       MPI_Status statuses[]) {
  if (Runtime::get() == nullptr) return MPI_ERR_OTHER;
  if (incount < 0) return MPI_ERR_COUNT;
  if (none_active(incount, requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  return collect_some(incount, requests, outcount, indices, statuses);
}

int mmpi_impl_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                       MPI_Status statuses[]) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (incount < 0) return MPI_ERR_COUNT;
  if (none_active(incount, requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  rt->engine().wait_until(
      [&] {
        for (int i = 0; i < incount; ++i)
          if (active(requests[i]) && rt->engine().test(*peek(requests[i]))) return true;
        return false;
      },
      true);
  return collect_some(incount, requests, outcount, indices, statuses);
}

int mmpi_impl_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (!active(request)) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  Request& r = *peek(request);
  *flag = rt->engine().test(r);
  if (*flag) zipper::client::Engine::fill_status(r, status);
  return MPI_SUCCESS;
}

int mmpi_impl_Request_free(MPI_Request* request) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (request == nullptr || *request == MPI_REQUEST_NULL) return MPI_ERR_REQUEST;
  Request* r = peek(*request);
  // MPI-3.1 §5.12: freeing a non-blocking collective's request is erroneous.
  if (dynamic_cast<zipper::coll::Schedule*>(r->progressable.get()) != nullptr)
    return MPI_ERR_REQUEST;
  const bool running = active(*request) && !rt->engine().test(*r);
  zipper::client::RequestPtr owned = take(request);
  // An active request completes in the background and is freed then.
  if (running) detach(std::move(owned));
  return MPI_SUCCESS;
}

}  // extern "C"

int mmpi_impl_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (*request == MPI_REQUEST_NULL) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  *flag = rt->engine().test(*peek(*request));
  return *flag ? collect(request, status) : MPI_SUCCESS;
}

int mmpi_impl_Wait(MPI_Request* request, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (*request == MPI_REQUEST_NULL) {
    empty_status(status);
    return MPI_SUCCESS;
  }
  Request& r = *peek(*request);
  Engine& e = rt->engine();
  e.wait_until([&] { return e.test(r); }, r.native != MPI_REQUEST_NULL);
  return collect(request, status);
}

int mmpi_impl_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  bool all = true;
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL && !rt->engine().test(*peek(requests[i]))) all = false;
  *flag = all;
  if (!all) return MPI_SUCCESS;
  return mmpi_impl_Waitall(count, requests, statuses);  // all complete: collects statuses
}

int mmpi_impl_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  Engine& e = rt->engine();
  e.wait_until(
      [&] {
        bool all = true;
        for (int i = 0; i < count; ++i)
          if (requests[i] != MPI_REQUEST_NULL && !e.test(*peek(requests[i]))) all = false;
        return all;
      },
      any_native(count, requests));
  bool any_error = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    int err = MPI_SUCCESS;
    if (requests[i] == MPI_REQUEST_NULL)
      empty_status(st);
    else
      err = collect(&requests[i], st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
    any_error |= err != MPI_SUCCESS;
  }
  return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int mmpi_impl_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  const bool none_active = std::none_of(requests, requests + count, active);
  if (none_active) {
    *index = MPI_UNDEFINED;
    empty_status(status);
    return MPI_SUCCESS;
  }
  int done = -1;
  Engine& e = rt->engine();
  e.wait_until(
      [&] {
        for (int i = 0; i < count; ++i) {
          if (active(requests[i]) && e.test(*peek(requests[i]))) {
            done = i;
            return true;
          }
        }
        return false;
      },
      any_native(count, requests));
  *index = done;
  return collect(&requests[done], status);
}
