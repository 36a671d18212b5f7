// The C API (mmpi.h): thin wrappers over Runtime with MPI's argument checks.
#include <mmpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../collectives/collectives.h"
#include "runtime.h"

using zipper::client::Request;
using zipper::client::Runtime;

MPI_Comm mmpi_comm_world = MPI_COMM_NULL;

namespace {

// MMPI_Request handles are MPI_Request values pointing at our Request objects.
Request* from_handle(MPI_Request h) { return reinterpret_cast<Request*>(h); }
MPI_Request to_handle(Request* r) { return reinterpret_cast<MPI_Request>(r); }

// Checks that the library is initialised and `comm` is MMPI_COMM_WORLD.
int check(MPI_Comm comm, Runtime** rt) {
  *rt = Runtime::get();
  if (*rt == nullptr) return MPI_ERR_OTHER;
  if (comm != mmpi_comm_world || comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  return MPI_SUCCESS;
}

// Completes and frees *h if it finished; returns the request's error.
int finish(MPI_Request* h, MPI_Status* st) {
  Request* r = from_handle(*h);
  Runtime::fill_status(r, st);
  const int err = r->error;
  if (r->progressable && r->progressable->retire(*r)) return err;  // issue 12: persistent
  delete r;
  *h = MPI_REQUEST_NULL;
  return err;
}

// True when some request waits on native Open MPI progress (no fd to sleep on).
bool any_native(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL && from_handle(requests[i])->native != MPI_REQUEST_NULL)
      return true;
  return false;
}

// issue 12: null and inactive persistent requests do not count for Waitany.
bool active(MPI_Request h) {
  const Request* r = from_handle(h);
  return h != MPI_REQUEST_NULL && !(r->progressable && r->progressable->inactive());
}

void empty_status(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  Request r;  // MPI: a null request yields source ANY, tag ANY, count 0
  Runtime::fill_status(&r, st);
}

}  // namespace

extern "C" {

int MMPI_Init(int* argc, char*** argv) {
  int provided = 0;
  return MMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int MMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = Runtime::init(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  std::string why;
  if (!zipper::coll::init_collectives(&why)) {
    std::fprintf(stderr, "mmpi[rank %d]: bad collective settings: %s (aborting)\n",
                 Runtime::get()->rank(), why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  mmpi_comm_world = Runtime::get()->native_comm();
  return rc;
}

int MMPI_Initialized(int* flag) {
  *flag = Runtime::get() != nullptr;
  return MPI_SUCCESS;
}

int MMPI_Finalize(void) {
  mmpi_comm_world = MPI_COMM_NULL;
  return Runtime::finalize();
}

int MMPI_Abort(MPI_Comm comm, int errorcode) {
  (void)comm;  // aborting the local cluster's job; zipperd tells the other side
  return MPI_Abort(MPI_COMM_WORLD, errorcode);
}

int MMPI_Comm_rank(MPI_Comm comm, int* rank) {
  Runtime* rt;
  if (int rc = check(comm, &rt)) return rc;
  *rank = rt->rank();
  return MPI_SUCCESS;
}

int MMPI_Comm_size(MPI_Comm comm, int* size) {
  Runtime* rt;
  if (int rc = check(comm, &rt)) return rc;
  *size = rt->size();
  return MPI_SUCCESS;
}

int MMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  Runtime* rt;
  if (int rc = check(comm, &rt)) return rc;
  Request* r = nullptr;
  const int rc = rt->isend(buf, count, datatype, dest, tag, &r);
  *request = to_handle(r);
  return rc;
}

int MMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  Runtime* rt;
  if (int rc = check(comm, &rt)) return rc;
  Request* r = nullptr;
  const int rc = rt->irecv(buf, count, datatype, source, tag, &r);
  *request = to_handle(r);
  return rc;
}

// Blocking calls are the non-blocking ones plus a wait. A request that failed
// at start is complete with its error, so the wait returns that error.
int MMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = MMPI_Isend(buf, count, datatype, dest, tag, comm, &req);
  if (req == MPI_REQUEST_NULL) return rc;  // not started: bad communicator or not initialised
  return MMPI_Wait(&req, MPI_STATUS_IGNORE);
}

int MMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = MMPI_Irecv(buf, count, datatype, source, tag, comm, &req);
  if (req == MPI_REQUEST_NULL) return rc;
  return MMPI_Wait(&req, status);
}

int MMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const int rc = MMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &reqs[0]);
  if (reqs[0] == MPI_REQUEST_NULL) return rc;
  MMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &reqs[1]);
  MPI_Status st[2];
  const int wrc = MMPI_Waitall(2, reqs, st);
  if (status != MPI_STATUS_IGNORE) *status = st[0];
  if (wrc == MPI_ERR_IN_STATUS)
    return st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  return wrc;
}

int MMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (*request == MPI_REQUEST_NULL) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  *flag = rt->test(from_handle(*request));
  return *flag ? finish(request, status) : MPI_SUCCESS;
}

int MMPI_Wait(MPI_Request* request, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (*request == MPI_REQUEST_NULL) {
    empty_status(status);
    return MPI_SUCCESS;
  }
  Request* r = from_handle(*request);
  rt->wait_until([&] { return rt->test(r); }, r->native != MPI_REQUEST_NULL);
  return finish(request, status);
}

int MMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  bool all = true;
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL && !rt->test(from_handle(requests[i]))) all = false;
  *flag = all;
  if (!all) return MPI_SUCCESS;
  return MMPI_Waitall(count, requests, statuses);  // all complete: collects statuses
}

int MMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  rt->wait_until(
      [&] {
        bool all = true;
        for (int i = 0; i < count; ++i)
          if (requests[i] != MPI_REQUEST_NULL && !rt->test(from_handle(requests[i]))) all = false;
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
      err = finish(&requests[i], st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
    any_error |= err != MPI_SUCCESS;
  }
  return any_error ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int MMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (count < 0) return MPI_ERR_COUNT;
  const bool none_active = std::none_of(requests, requests + count, active);  // issue 12: active()
  if (none_active) {
    *index = MPI_UNDEFINED;
    empty_status(status);
    return MPI_SUCCESS;
  }
  int done = -1;
  rt->wait_until(
      [&] {
        for (int i = 0; i < count; ++i) {
          if (active(requests[i]) && rt->test(from_handle(requests[i]))) {  // issue 12
            done = i;
            return true;
          }
        }
        return false;
      },
      any_native(count, requests));
  *index = done;
  return finish(&requests[done], status);
}

int MMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Runtime* rt;
  if (int rc = check(comm, &rt)) return rc;
  bool f = false;
  const int rc = rt->iprobe(source, tag, &f, status);
  *flag = f;
  return rc;
}

int MMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Runtime* rt;
  if (int rc = check(comm, &rt)) return rc;
  bool f = false;
  int rc = MPI_SUCCESS;
  rt->wait_until([&] {
    rc = rt->iprobe(source, tag, &f, status);
    return f || rc != MPI_SUCCESS;
  });
  return rc;
}

int MMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  // Statuses carry their byte count the MPI way (MPI_Status_set_elements_x),
  // so Open MPI's own MPI_Get_count answers, MPI_UNDEFINED included.
  return MPI_Get_count(status, datatype, count);
}

double MMPI_Wtime(void) { return MPI_Wtime(); }

}  // extern "C"
