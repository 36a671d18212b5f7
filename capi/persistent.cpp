// Persistent requests (MPI-3.1 §3.9): MMPI_Send_init, Bsend_init,
// Rsend_init, Recv_init create an inactive request; MMPI_Start(all) starts
// one operation with the saved arguments; Wait/Test collect it and leave the
// request allocated and inactive (a Wait on an inactive request returns at
// once with an empty status), until MMPI_Request_free.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <memory>

#include "../client/engine.h"
#include "../client/runtime.h"
#include "bsend.h"
#include "coll_checks.h"
#include "progress.h"

using zipper::client::Request;
using zipper::client::RequestKind;
using namespace zipper::capi;

namespace {

enum class Op { kSend, kSsend, kBsend, kRecv };

class PersistentOp final : public zipper::client::Progressable {
 public:
  PersistentOp(Op op, const void* buf, int count, MPI_Datatype type, int peer, int tag,
               MPI_Comm comm)
      : op_(op), buf_(const_cast<void*>(buf)), count_(count), peer_(peer), tag_(tag), comm_(comm) {
    // The request keeps its own reference to a derived datatype (MPI lets
    // the application free its handle meanwhile).
    int ni = 0, na = 0, nd = 0, combiner = 0;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED || MPI_Type_dup(type, &type_) != MPI_SUCCESS) type_ = type;
    owns_type_ = type_ != type;
  }
  ~PersistentOp() override {
    // inner_ is only destroyed when inactive or complete (Request_free waits).
    if (active_) note_persistent(-1);
    if (owns_type_) MPI_Type_free(&type_);
  }

  int start() {
    if (active_) return MPI_ERR_REQUEST;
    active_ = true;
    note_persistent(+1);
    start_error_ = MPI_SUCCESS;
    MPI_Request h = MPI_REQUEST_NULL;
    switch (op_) {
      case Op::kSend:
        start_error_ = mmpi_impl_Isend(buf_, count_, type_, peer_, tag_, comm_, &h);
        break;
      case Op::kSsend:
        start_error_ = mmpi_impl_Issend(buf_, count_, type_, peer_, tag_, comm_, &h);
        break;
      case Op::kRecv:
        start_error_ = mmpi_impl_Irecv(buf_, count_, type_, peer_, tag_, comm_, &h);
        break;
      case Op::kBsend:
        start_error_ = bsend_start(buf_, count_, type_, peer_, tag_, comm_);
        break;
    }
    inner_ = h == MPI_REQUEST_NULL ? nullptr : take(&h);
    return start_error_;
  }

  bool poll(Request& outer) override {
    if (!active_) return true;  // inactive: complete, empty status
    if (inner_ == nullptr) {    // buffered, or failed to start
      outer.error = start_error_;
      return true;
    }
    if (!zipper::client::Runtime::get()->engine().test(*inner_)) return false;
    outer.error = inner_->error;
    outer.status_source = inner_->status_source;
    outer.status_tag = inner_->status_tag;
    outer.status_bytes = inner_->status_bytes;
    return true;
  }

  bool retire(Request& outer) override {
    inner_.reset();
    if (active_) note_persistent(-1);
    active_ = false;
    Request empty;
    outer.complete = false;
    outer.error = MPI_SUCCESS;
    outer.status_source = empty.status_source;
    outer.status_tag = empty.status_tag;
    outer.status_bytes = 0;
    return true;
  }

  bool inactive() const override { return !active_; }

 private:
  Op op_;
  void* buf_;
  int count_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool owns_type_ = false;
  int peer_, tag_;
  MPI_Comm comm_;
  bool active_ = false;
  int start_error_ = MPI_SUCCESS;
  zipper::client::RequestPtr inner_;
};

int init(Op op, const void* buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
         MPI_Request* request) {
  if (request == nullptr) return MPI_ERR_REQUEST;
  zipper::client::Runtime* rt = nullptr;
  std::shared_ptr<zipper::client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (int rc = check_buf(count, type)) return rc;
  const bool any_ok = op == Op::kRecv;
  if (peer != MPI_PROC_NULL && !(any_ok && peer == MPI_ANY_SOURCE) &&
      (peer < 0 || peer >= c->size()))
    return MPI_ERR_RANK;
  if (tag < 0 && !(any_ok && tag == MPI_ANY_TAG)) return MPI_ERR_TAG;
  join_progress();
  auto r = std::make_unique<Request>();
  r->kind = RequestKind::kProgressable;
  r->comm = c;  // its errors go to this communicator's handler
  r->progressable = std::make_unique<PersistentOp>(op, buf, count, type, peer, tag, comm);
  *request = to_handle(std::move(r));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int mmpi_impl_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Request* request) {
  return init(Op::kSend, buf, count, datatype, dest, tag, comm, request);
}

int mmpi_impl_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  return init(Op::kBsend, buf, count, datatype, dest, tag, comm, request);
}

int mmpi_impl_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  return init(Op::kSsend, buf, count, datatype, dest, tag, comm, request);
}

int mmpi_impl_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  return init(Op::kSend, buf, count, datatype, dest, tag, comm, request);
}

int mmpi_impl_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Request* request) {
  return init(Op::kRecv, buf, count, datatype, source, tag, comm, request);
}

int mmpi_impl_Start(MPI_Request* request) {
  if (request == nullptr || *request == MPI_REQUEST_NULL) return MPI_ERR_REQUEST;
  Request* r = peek(*request);
  auto* p = r->kind == RequestKind::kProgressable
                ? dynamic_cast<PersistentOp*>(r->progressable.get())
                : nullptr;
  if (p == nullptr) return MPI_ERR_REQUEST;  // not a persistent request
  r->complete = false;
  return p->start();
}

int mmpi_impl_Startall(int count, MPI_Request requests[]) {
  if (count < 0) return MPI_ERR_COUNT;
  for (int i = 0; i < count; ++i)
    if (int rc = mmpi_impl_Start(&requests[i])) return rc;
  return MPI_SUCCESS;
}

}  // extern "C"
