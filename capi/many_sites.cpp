// Communicator creation's agreements over any number of sites (many_sites.h).
#include "many_sites.h"

#include <vector>

#include "../collectives/allgather_two_level.h"
#include "../collectives/allreduce_two_tier.h"
#include "../collectives/barrier_two_level.h"
#include "../collectives/nbc_barrier_dissemination.h"
#include "../collectives/nbc_bcast_binomial.h"
#include "../collectives/nbc_direct.h"
#include "../collectives/nbc_reduce_binomial.h"
#include "../collectives/typed_buffer.h"
#include "nbc_launch.h"

namespace zipper::capi {

namespace {

int wait_for(const char* what, std::unique_ptr<coll::Schedule> s) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = nbc_launch(what, std::move(s), &r)) return rc;
  return mmpi_impl_Wait(&r, MPI_STATUS_IGNORE);
}

}  // namespace

int barrier_any(const coll::Topology& t) {
  if (!beyond_two_sites(t)) return coll::barrier_two_level(t);
  auto s = nbc_schedule(t);
  coll::nbc_barrier_dissemination(*s);
  return wait_for("barrier (communicator creation)", std::move(s));
}

int allreduce_any(const coll::Topology& t, const void* in, void* out, int count, MPI_Datatype type,
                  MPI_Op op) {
  if (!beyond_two_sites(t)) return coll::allreduce_two_tier(t, in, out, count, type, op);
  auto s = nbc_schedule(t);
  coll::nbc_reduce_binomial(*s, in, out, count, type, op, 0);
  s->end_round();
  coll::nbc_bcast_binomial(*s, out, count, type, 0);
  return wait_for("allreduce (communicator creation)", std::move(s));
}

int allgather_any(const coll::Topology& t, const void* in, int count, MPI_Datatype type,
                  void* out) {
  if (!beyond_two_sites(t)) return coll::allgather_two_level(t, in, count, type, out, count, type);
  auto s = nbc_schedule(t);
  std::vector<coll::Block> sends(t.size), recvs(t.size);
  for (int r = 0; r < t.size; ++r) {
    sends[r] = coll::Block{const_cast<void*>(in), count, type, true};
    recvs[r] = coll::Block{coll::elem(out, MPI_Aint{r} * count, type), count, type, true};
  }
  coll::nbc_direct(*s, sends, recvs);
  return wait_for("allgather (communicator creation)", std::move(s));
}

}  // namespace zipper::capi
