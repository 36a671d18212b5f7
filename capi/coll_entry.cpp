#include "coll_entry.h"

#include <mmpi.h>

#include <cstdio>
#include <string>

#include "handles.h"

namespace zipper::capi {

int enter(MPI_Comm comm, coll::Topology* t) {
  client::Runtime* rt = nullptr;
  std::shared_ptr<client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (c->inter) return MPI_ERR_COMM;  // those defined on them dispatch to capi/intercomm_coll.cpp
  *t = coll::Topology::of(rt->engine(), std::move(c));
  return MPI_SUCCESS;
}

int check_type(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  // _x: a type of 2 GiB and more is valid (MPI_Type_size gives MPI_UNDEFINED).
  MPI_Count size = 0;
  return MPI_Type_size_x(type, &size) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int check_buf(int count, MPI_Datatype type) {
  if (count < 0) return MPI_ERR_COUNT;
  return check_type(type);
}

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  MPI_Count size = 0;
  MPI_Type_size_x(type, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size < 0 ? 0 : size);
}

int finish(const char* what, const coll::Topology& t, coll::Choice ch, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr,
               "mmpi[rank %d]: %s (algorithm %s, n=%d) failed: %s; the other ranks cannot "
               "complete it, aborting the job\n",
               t.rank, what, std::string(coll::name_of(ch.algorithm)).c_str(), ch.inter_senders,
               text);
  std::fflush(stderr);
  MMPI_Abort(MPI_COMM_WORLD, rc);  // ends both clusters
  return rc;
}

int senders(const coll::Topology& t, coll::Choice ch) {
  return t.clamp_senders(ch.inter_senders ? ch.inter_senders : t.max_senders());
}

}  // namespace zipper::capi
