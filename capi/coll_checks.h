// The argument checks and the failure rule of collectives/api.cpp, shared by
// the C entry points added for issue 12 (collectives_v.cpp, nbc.cpp). Copies
// of api.cpp's anonymous-namespace helpers enter/check_type/check_buf/finish:
// when api.cpp moves here they should become this one header.
#pragma once

#include <mmpi.h>

#include <cstdio>

#include "../client/runtime.h"
#include "../collectives/topology.h"

namespace zipper::capi {

/// Checks initialisation and the communicator; fills *t.
inline int enter(MPI_Comm comm, coll::Topology* t) {
  client::Runtime* rt = client::Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  if (comm != mmpi_comm_world || comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  *t = coll::Topology::of(*rt);
  return MPI_SUCCESS;
}

inline int check_type(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  int size = 0;
  return MPI_Type_size(type, &size) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_TYPE;
}

inline int check_buf(int count, MPI_Datatype type) {
  if (count < 0) return MPI_ERR_COUNT;
  return check_type(type);
}

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

/// Any error once ranks have started communicating is fatal: the other ranks
/// cannot complete the operation (see collectives/api.cpp).
inline int finish(const char* what, const char* algorithm, const coll::Topology& t, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr,
               "mmpi[rank %d]: %s (algorithm %s) failed: %s; the other ranks cannot complete it, "
               "aborting the job\n",
               t.rank, what, algorithm, text);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, rc);
  return rc;
}

}  // namespace zipper::capi
