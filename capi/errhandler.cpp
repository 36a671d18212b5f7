// MPI error handlers at the API boundary (errhandler.h): the targets the
// generated wrappers name, the handler call, and MMPI_Comm_set/get/
// call_errhandler, which keep each communicator's handler in its
// client::Comm. The native communicator under an MMPI handle always returns
// errors as codes, so that every error reaches mmpi_err_raise exactly once.
#include "errhandler.h"

#include <mmpi.h>

#include <cstdio>
#include <string>

#include "handles.h"

using zipper::client::Comm;
using zipper::client::Runtime;

namespace zipper::capi {

namespace {

bool predefined(MPI_Errhandler h) { return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN; }

// Runs `f` with `h` set as the native handler of `handle` (the MMPI handle is
// a native communicator), then returns it to MPI_ERRORS_RETURN: Open MPI then
// calls a user handler with the MMPI handle, and counts the references.
template <typename F>
void with_native_handler(MPI_Comm handle, MPI_Errhandler h, F f) {
  MPI_Comm_set_errhandler(handle, h);
  f();
  MPI_Comm_set_errhandler(handle, MPI_ERRORS_RETURN);
}

std::string comm_label(const Comm& c) {
  return c.name.empty() ? "a communicator (context id " + std::to_string(c.cid()) + ")" : c.name;
}

}  // namespace

int set_errhandler(Comm& c, MPI_Errhandler h) {
  if (h == MPI_ERRHANDLER_NULL) return MPI_ERR_ARG;
  if (predefined(h)) {
    c.errhandler_keeper = client::NativeComm();
  } else {
    MPI_Comm keeper = MPI_COMM_NULL;
    if (int rc = MPI_Comm_dup(MPI_COMM_SELF, &keeper)) return rc;
    client::NativeComm k(keeper);
    MPI_Comm_set_errhandler(keeper, MPI_ERRORS_RETURN);
    // Open MPI checks the handler's kind (communicator, file, window) here.
    if (int rc = MPI_Comm_set_errhandler(keeper, h)) return rc;
    c.errhandler_keeper = std::move(k);
  }
  c.errhandler = h;
  return MPI_SUCCESS;
}

void inherit_errhandler(const Comm& parent, Comm& child) {
  if (set_errhandler(child, parent.errhandler) != MPI_SUCCESS)
    child.errhandler = MPI_ERRORS_ARE_FATAL;
}

}  // namespace zipper::capi

using namespace zipper::capi;

extern "C" {

mmpi_err_target mmpi_err_of_comm(MPI_Comm comm) { return {comm, 1}; }

mmpi_err_target mmpi_err_of_world(void) { return {MPI_COMM_NULL, 0}; }

mmpi_err_target mmpi_err_of_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL || Runtime::get() == nullptr) return {MPI_COMM_NULL, 0};
  const zipper::client::Request* r = peek(request);
  if (r == nullptr) return {MPI_COMM_NULL, 0};  // an unknown int handle (MPICH)
  const auto& c = r->comm;
  return {c ? handle_of(*c) : MPI_COMM_NULL, 0};
}

mmpi_err_target mmpi_err_of_requests(int count, const MPI_Request requests[]) {
  for (int i = 0; requests != nullptr && i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL) return mmpi_err_of_request(requests[i]);
  return {MPI_COMM_NULL, 0};
}

mmpi_err_target mmpi_err_of_message(MPI_Message message) {
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return {MPI_COMM_NULL, 0};
  const zipper::client::MatchedMessage* m = zipper::capi::MessageHandles::decode(message);
  if (m == nullptr) return {MPI_COMM_NULL, 0};
  const auto& c = m->comm;
  return {c ? handle_of(*c) : MPI_COMM_NULL, 0};
}

int mmpi_err_raise(mmpi_err_target target, int rc, const char* fn) {
  Runtime* rt = Runtime::get();
  if (rc == MPI_SUCCESS || rt == nullptr) return rc;
  std::shared_ptr<Comm> c;
  if (target.comm != MPI_COMM_NULL) c = rt->comms().find(target.comm);
  // The message names the handle the call was passed, also when it is no
  // MMPI communicator (whose error then goes to MMPI_COMM_WORLD's handler).
  std::string label;
  if (!c && target.given) {
    const std::string hex = handle_text(target.comm);
    label = target.comm == MPI_COMM_NULL
                ? std::string("MPI_COMM_NULL")
                : std::string("an invalid communicator handle (") + hex + ")";
  }
  if (!c) c = rt->comms().find(rt->world_handle());
  if (!c) return rc;
  if (label.empty()) label = comm_label(*c);
  const MPI_Errhandler h = c->errhandler;
  if (h == MPI_ERRORS_RETURN) return rc;
  const MPI_Comm handle = handle_of(*c);
  if (h == MPI_ERRORS_ARE_FATAL) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc == MPI_ERR_OTHER && rt->engine().link_lost())
      std::snprintf(text, sizeof text, "MPI_ERR_OTHER: the link to zipperd is lost");
    else if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
      std::snprintf(text, sizeof text, "%d", rc);
    std::fprintf(stderr,
                 "mmpi[rank %d]: %s on %s failed: %s; MPI_ERRORS_ARE_FATAL: aborting the job\n",
                 rt->rank(), fn, label.c_str(), text);
    std::fflush(stderr);
    MMPI_Abort(MPI_COMM_WORLD, rc);  // ends both clusters
    return rc;
  }
  with_native_handler(handle, h, [&] { MPI_Comm_call_errhandler(handle, rc); });
  return rc;
}

int mmpi_impl_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  return set_errhandler(*c, errhandler);
}

int mmpi_impl_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  // MPI hands out a new reference (the program frees it): Open MPI's own
  // get_errhandler takes it.
  int rc = MPI_SUCCESS;
  with_native_handler(handle_of(*c), c->errhandler,
                      [&] { rc = MPI_Comm_get_errhandler(handle_of(*c), errhandler); });
  return rc;
}

int MMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c))
    return mmpi_err_raise(mmpi_err_of_world(), rc, "MMPI_Comm_call_errhandler");
  mmpi_err_raise(mmpi_err_of_comm(comm), errorcode, "MMPI_Comm_call_errhandler");
  return MPI_SUCCESS;
}

}  // extern "C"
