// Generalized requests (MPI-3.1 section 12.2): an operation the application
// runs itself, completed by MPI_Grequest_complete, usable in every MMPI wait
// and test function. It is a libmmpi request whose Progressable finishes
// once completed: the query callback then fills its status (once), and the
// free callback runs when the application collects or frees it.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <memory>

#include "handles.h"

using zipper::client::Progressable;
using zipper::client::Request;
using zipper::client::RequestKind;

namespace {

class Grequest final : public Progressable {
 public:
  Grequest(MPI_Grequest_query_function* q, MPI_Grequest_free_function* f,
           MPI_Grequest_cancel_function* c, void* extra)
      : query_(q), free_(f), cancel_(c), extra_(extra) {}
  ~Grequest() override {
    if (free_ != nullptr) free_(extra_);
  }

  bool poll(Request& outer) override {
    if (!completed) return false;
    MPI_Status st{};
    st.MPI_SOURCE = MPI_UNDEFINED;
    st.MPI_TAG = MPI_UNDEFINED;
    MPI_Status_set_elements_x(&st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(&st, 0);
    outer.error = query_ != nullptr ? query_(extra_, &st) : MPI_SUCCESS;
    outer.status_source = st.MPI_SOURCE;
    outer.status_tag = st.MPI_TAG;
    MPI_Count bytes = 0;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    outer.status_bytes = bytes == MPI_UNDEFINED ? 0 : static_cast<std::uint64_t>(bytes);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    outer.cancelled = cancelled != 0;
    return true;
  }

  int cancel() { return cancel_ != nullptr ? cancel_(extra_, completed ? 1 : 0) : MPI_SUCCESS; }

  bool completed = false;

 private:
  MPI_Grequest_query_function* query_;
  MPI_Grequest_free_function* free_;
  MPI_Grequest_cancel_function* cancel_;
  void* extra_;
};

}  // namespace

extern "C" {

int mmpi_impl_Grequest_start(MPI_Grequest_query_function* query_fn,
                             MPI_Grequest_free_function* free_fn,
                             MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                             MPI_Request* request) {
  if (request == nullptr) return MPI_ERR_ARG;
  auto r = std::make_unique<Request>();
  r->kind = RequestKind::kProgressable;
  r->progressable = std::make_unique<Grequest>(query_fn, free_fn, cancel_fn, extra_state);
  *request = zipper::capi::to_handle(std::move(r));
  return MPI_SUCCESS;
}

int mmpi_impl_Grequest_complete(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return MPI_ERR_REQUEST;
  Request* r = zipper::capi::peek(request);
  auto* g = r->kind == RequestKind::kProgressable ? dynamic_cast<Grequest*>(r->progressable.get())
                                                  : nullptr;
  if (g == nullptr) return MPI_ERR_REQUEST;
  g->completed = true;
  return MPI_SUCCESS;
}

}  // extern "C"
