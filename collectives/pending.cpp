#include "pending.h"

namespace zipper::coll {

using client::SendMode;
using client::Traffic;

Pending::~Pending() {
  // After a failed start the caller aborts the job (capi/collectives.cpp:
  // finish), and waiting could hang on a peer that waits for what we failed to send.
  if (error_ == MPI_SUCCESS && (!remote_.empty() || !native_.empty())) wait();
}

int Pending::started(int rc, client::RequestPtr r) {
  if (r) remote_.push_back(std::move(r));
  if (rc != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = rc;
  return rc;
}

int Pending::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag) {
  client::RequestPtr r;
  const int rc = t_.p2p->isend(t_.comm, Traffic::kCollective, buf, count, type, dest, tag, &r,
                               SendMode::kStandard);
  return started(rc, std::move(r));
}

int Pending::irecv(void* buf, int count, MPI_Datatype type, int source, int tag) {
  client::RequestPtr r;
  const int rc = t_.p2p->irecv(t_.comm, Traffic::kCollective, buf, count, type, source, tag, &r);
  return started(rc, std::move(r));
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
  t_.p2p->wait_until(
      [&] {
        for (std::size_t i = 0; i < remote_.size();) {
          client::Request& r = *remote_[i];
          if (!t_.p2p->test(r)) {
            ++i;
            continue;
          }
          if (r.error != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = r.error;
          remote_[i] = std::move(remote_.back());
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
