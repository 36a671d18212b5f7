// The argument checks the v-collectives and the non-blocking collectives add
// to coll_entry.h (blocks of counts, operations, roots), and their failure
// rule, which names an algorithm instead of a Choice.
#pragma once

#include <mmpi.h>

#include <cstdio>

#include "../collectives/topology.h"
#include "coll_entry.h"

namespace zipper::capi {

/// count >= 0 and a valid datatype for each of `n` blocks.
inline int check_bufs(int n, const int counts[], MPI_Datatype type) {
  if (counts == nullptr && n > 0) return MPI_ERR_COUNT;
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0) return MPI_ERR_COUNT;
  return check_type(type);
}

inline int check_op(MPI_Op op) { return op == MPI_OP_NULL ? MPI_ERR_OP : MPI_SUCCESS; }

inline int check_root(const coll::Topology& t, int root) {
  return root < 0 || root >= t.size ? MPI_ERR_ROOT : MPI_SUCCESS;
}

/// MPI_Alltoallw's arguments on an intra-communicator: MPI_ERR_ARG for a
/// null array (the send arrays may be null with MPI_IN_PLACE), then each
/// rank's receive and send block count and type.
inline int check_alltoallw(const coll::Topology& t, const void* sendbuf, const int sendcounts[],
                           const int sdispls[], const MPI_Datatype sendtypes[],
                           const int recvcounts[], const int rdispls[],
                           const MPI_Datatype recvtypes[]) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (recvcounts == nullptr || rdispls == nullptr || recvtypes == nullptr) return MPI_ERR_ARG;
  if (!in_place && (sendcounts == nullptr || sdispls == nullptr || sendtypes == nullptr))
    return MPI_ERR_ARG;
  for (int r = 0; r < t.size; ++r) {
    if (int rc = check_buf(recvcounts[r], recvtypes[r])) return rc;
    if (!in_place)
      if (int rc = check_buf(sendcounts[r], sendtypes[r])) return rc;
  }
  return MPI_SUCCESS;
}

/// Any error once ranks have started communicating is fatal: the other ranks
/// cannot complete the operation (see capi/collectives.cpp).
inline int finish_named(const char* what, const char* algorithm, const coll::Topology& t, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr,
               "mmpi[rank %d]: %s (algorithm %s) failed: %s; the other ranks cannot complete it, "
               "aborting the job\n",
               t.rank, what, algorithm, text);
  std::fflush(stderr);
  MMPI_Abort(MPI_COMM_WORLD, rc);  // ends both clusters
  return rc;
}

}  // namespace zipper::capi
