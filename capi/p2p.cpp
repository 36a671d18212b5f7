// The point-to-point and lifetime half of the C API (mmpi.h): MPI's argument
// checks, then the engine (client/engine.h).
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../collectives/collectives.h"
#include "handles.h"
#include "profile_matrix.h"
#include "progress.h"

using zipper::client::CommPtr;
using zipper::client::Engine;
using zipper::client::Request;
using zipper::client::RequestPtr;
using zipper::client::Runtime;
using zipper::client::SendMode;
using zipper::client::Traffic;
using namespace zipper::capi;

MPI_Comm mmpi_comm_world = MPI_COMM_NULL;

namespace {

int start_send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request, SendMode mode) {
  Runtime* rt;
  std::shared_ptr<zipper::client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  RequestPtr r;
  const int rc =
      rt->engine().isend(c, Traffic::kPointToPoint, buf, count, datatype, dest, tag, &r, mode);
  *request = to_handle(std::move(r));
  return rc;
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
  if (!zipper::coll::init_collectives(Runtime::get()->settings().env, &why)) {
    std::fprintf(stderr, "mmpi[rank %d]: bad collective settings: %s (aborting)\n",
                 Runtime::get()->rank(), why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  mmpi_comm_world = Runtime::get()->world_handle();
  return rc;
}

int MMPI_Initialized(int* flag) {
  *flag = Runtime::get() != nullptr;
  return MPI_SUCCESS;
}

int MMPI_Finalize(void) {
  // The profile's matrix needs MMPI_COMM_WORLD still running.
  if (Runtime* rt = Runtime::get()) write_profile_matrix(*rt);
  mmpi_comm_world = MPI_COMM_NULL;
  return Runtime::finalize();
}

int MMPI_Abort(MPI_Comm comm, int errorcode) {
  (void)comm;  // the whole job ends, both clusters (as Open MPI does for any comm)
  return Runtime::abort(errorcode);
}

int mmpi_impl_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return start_send(buf, count, datatype, dest, tag, comm, request, SendMode::kStandard);
}

int mmpi_impl_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return start_send(buf, count, datatype, dest, tag, comm, request, SendMode::kSynchronous);
}

int mmpi_impl_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  Runtime* rt;
  std::shared_ptr<zipper::client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  RequestPtr r;
  const int rc =
      rt->engine().irecv(c, Traffic::kPointToPoint, buf, count, datatype, source, tag, &r);
  *request = to_handle(std::move(r));
  return rc;
}

// Blocking calls are the non-blocking ones plus a wait. A request that failed
// at start is complete with its error, so the wait returns that error.
int mmpi_impl_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = mmpi_impl_Isend(buf, count, datatype, dest, tag, comm, &req);
  if (req == MPI_REQUEST_NULL) return rc;  // not started: bad communicator or not initialised
  return mmpi_impl_Wait(&req, MPI_STATUS_IGNORE);
}

int mmpi_impl_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = mmpi_impl_Issend(buf, count, datatype, dest, tag, comm, &req);
  if (req == MPI_REQUEST_NULL) return rc;
  return mmpi_impl_Wait(&req, MPI_STATUS_IGNORE);
}

int mmpi_impl_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Status* status) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = mmpi_impl_Irecv(buf, count, datatype, source, tag, comm, &req);
  if (req == MPI_REQUEST_NULL) return rc;
  return mmpi_impl_Wait(&req, status);
}

int mmpi_impl_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                       int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                       int recvtag, MPI_Comm comm, MPI_Status* status) {
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const int rc = mmpi_impl_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &reqs[0]);
  if (reqs[0] == MPI_REQUEST_NULL) return rc;
  mmpi_impl_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &reqs[1]);
  MPI_Status st[2];
  const int wrc = mmpi_impl_Waitall(2, reqs, st);
  if (status != MPI_STATUS_IGNORE) {
    const int user_error = status->MPI_ERROR;  // a single-completion call leaves it
    *status = st[0];
    status->MPI_ERROR = user_error;
  }
  if (wrc == MPI_ERR_IN_STATUS)
    return st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
  return wrc;
}

int mmpi_impl_Cancel(MPI_Request* request) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (request == nullptr || *request == MPI_REQUEST_NULL) return MPI_ERR_REQUEST;
  rt->engine().cancel(*peek(*request));  // MPI: completion is still waited for
  return MPI_SUCCESS;
}

int mmpi_impl_Test_cancelled(const MPI_Status* status, int* flag) {
  return MPI_Test_cancelled(status, flag);
}

int mmpi_impl_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Runtime* rt;
  std::shared_ptr<zipper::client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  bool f = false;
  const int rc = rt->engine().iprobe(c, source, tag, &f, status);
  *flag = f;
  return rc;
}

int mmpi_impl_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Runtime* rt;
  std::shared_ptr<zipper::client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  bool f = false;
  int rc = MPI_SUCCESS;
  rt->engine().wait_until(
      [&] {
        rc = rt->engine().iprobe(c, source, tag, &f, status);
        return f || rc != MPI_SUCCESS;
      },
      false);
  return rc;
}

int mmpi_impl_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                      MPI_Status* status) {
  Runtime* rt;
  std::shared_ptr<zipper::client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  *flag = 0;
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    bool f = false;
    return rt->engine().iprobe(c, source, tag, &f, status);
  }
  std::unique_ptr<zipper::client::MatchedMessage> m;
  const int rc = rt->engine().improbe(c, source, tag, &m, status);
  if (m) {
    *flag = 1;
    *message = to_handle(std::move(m));
  }
  return rc;
}

int mmpi_impl_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  int flag = 0, rc = MPI_SUCCESS;
  rt->engine().wait_until(
      [&] {
        rc = mmpi_impl_Improbe(source, tag, comm, &flag, message, status);
        return flag || rc != MPI_SUCCESS;
      },
      false);
  return rc;
}

int mmpi_impl_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                     MPI_Request* request) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (message == nullptr || *message == MPI_MESSAGE_NULL) return MPI_ERR_REQUEST;
  if (*message == MPI_MESSAGE_NO_PROC) {
    // A receive from MPI_PROC_NULL: complete at once with the empty status.
    *message = MPI_MESSAGE_NULL;
    RequestPtr r;
    rt->engine().irecv(rt->world(), Traffic::kPointToPoint, buf, count, datatype, MPI_PROC_NULL, 0,
                       &r);
    *request = to_handle(std::move(r));
    return MPI_SUCCESS;
  }
  RequestPtr r;
  const int rc = rt->engine().mrecv(take_message(message), buf, count, datatype, &r);
  *request = to_handle(std::move(r));
  return rc;
}

int mmpi_impl_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                    MPI_Status* status) {
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = mmpi_impl_Imrecv(buf, count, datatype, message, &req);
  if (req == MPI_REQUEST_NULL) return rc;
  return mmpi_impl_Wait(&req, status);
}

int mmpi_impl_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  // Statuses carry their byte count the MPI way (MPI_Status_set_elements_x),
  // so Open MPI's own MPI_Get_count answers, MPI_UNDEFINED included.
  return MPI_Get_count(status, datatype, count);
}

double MMPI_Wtime(void) { return MPI_Wtime(); }

}  // extern "C"
