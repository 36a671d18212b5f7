// A set of outstanding operations of one collective: inter-cluster messages
// through the point-to-point interface and native Open MPI requests
// (non-blocking collectives and point-to-point on the cluster's collective
// communicator). Waiting on the whole set progresses both kinds together, so
// a native step and an inter-cluster transfer overlap instead of running one
// after the other.
#pragma once

#include <mpi.h>

#include <vector>

#include "topology.h"

namespace zipper::coll {

class Pending {
 public:
  explicit Pending(const Topology& t) : t_(t) {}
  /// Waits for whatever is still outstanding (so no buffer is freed under an
  /// operation), ignoring errors; after a failed start it does not wait, as
  /// the caller aborts the job.
  ~Pending();
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  /// Starts a send of `count` elements of `type` to rank `dest` of the
  /// topology's communicator on its collective context. Returns an MPI error code.
  int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag);
  /// Starts a receive from rank `source` (no wildcards).
  int irecv(void* buf, int count, MPI_Datatype type, int source, int tag);
  /// Adopts a native request (e.g. from MPI_Ibcast on Topology::local).
  void add(MPI_Request native);
  /// Adopts the request a native call stored in *native and returned `rc`
  /// with (a pointer, because argument evaluation order is unspecified).
  int add(int rc, const MPI_Request* native);

  /// Waits until everything completed. Returns MPI_SUCCESS or the first
  /// error (MPI_ERR_OTHER when a peer or zipperd went away); returns at once
  /// if a start already failed.
  int wait();

 private:
  int started(int rc, client::RequestPtr r);

  const Topology& t_;
  std::vector<client::RequestPtr> remote_;
  std::vector<MPI_Request> native_;
  int error_ = MPI_SUCCESS;
};

/// Waits for one native request a call stored in *native and returned `rc`
/// with, progressing this rank's inter-cluster traffic meanwhile. Blocking
/// native collectives would not: a peer's MPI_Ssend to a receive this rank
/// posted before the collective could then never complete, and the peer
/// never reach the collective (MPI-3.1 section 3.7.4's progress rule;
/// MPICH pt2pt/rqstatus). Returns an MPI error code.
inline int wait_native(const Topology& t, int rc, const MPI_Request* native) {
  Pending p(t);
  if (p.add(rc, native) != MPI_SUCCESS) return rc;
  return p.wait();
}

}  // namespace zipper::coll
