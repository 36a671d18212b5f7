#include "pending.h"

namespace zipper::coll {

Pending::~Pending() {
  // After a failed start the caller aborts the job (api.cpp: finish), and
  // waiting could hang on a peer that waits for what we failed to send.
  if (error_ == MPI_SUCCESS && (!remote_.empty() || !native_.empty())) wait();
}

int Pending::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag) {
  client::Request* r = nullptr;
  const int rc = t_.rt->isend(buf, count, type, dest, tag, &r, client::kCollectiveContext);
  if (r != nullptr) remote_.push_back(r);
  if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  return rc;
}

int Pending::irecv(void* buf, int count, MPI_Datatype type, int source, int tag) {
  client::Request* r = nullptr;
  const int rc = t_.rt->irecv(buf, count, type, source, tag, &r, client::kCollectiveContext);
  if (r != nullptr) remote_.push_back(r);
  if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  return rc;
}

void Pending::add(MPI_Request native) {
  if (native != MPI_REQUEST_NULL) native_.push_back(native);
}

int Pending::add(int rc, const MPI_Request* native) {
  if (rc == MPI_SUCCESS)
    add(*native);
  else if (error_ == MPI_SUCCESS)
    error_ = rc;
  return rc;
}

int Pending::wait() {
  // A start failed: the peers of this collective may never send what we are
  // waiting for, so report at once (the caller aborts the job).
  if (error_ != MPI_SUCCESS) return error_;
  // Requests are removed as they complete, so each pass tests only what is left.
  t_.rt->wait_until(
      [&] {
        for (std::size_t i = 0; i < remote_.size();) {
          client::Request* r = remote_[i];
          if (!t_.rt->test(r)) {
            ++i;
            continue;
          }
          if (r->error != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = r->error;
          delete r;
          remote_[i] = remote_.back();
          remote_.pop_back();
        }
        if (!native_.empty()) {
          int flag = 0;
          const int rc = MPI_Testall(static_cast<int>(native_.size()), native_.data(), &flag,
                                     MPI_STATUSES_IGNORE);
          if (rc != MPI_SUCCESS) {
            if (error_ == MPI_SUCCESS) error_ = rc;
            native_.clear();  // Open MPI completed or freed them on error
          } else if (flag) {
            native_.clear();
          }
        }
        return remote_.empty() && native_.empty();
      },
      !native_.empty());
  return error_;
}

}  // namespace zipper::coll
