// Collectives on a communicator spanning more than two sites. The two-level
// algorithms (collectives/*_two_level, *_two_tier, ...) have one inter-site
// step between two sites; beyond two sites every blocking collective runs
// its non-blocking schedule instead (collectives/schedule.h: flat over the
// communicator, point-to-point through the engine, natively inside this
// site) and waits for it. Communicator creation's own agreements do the
// same. With two sites or fewer nothing changes.
#pragma once

#include <mmpi.h>
#include <mmpi_impl_generated.h>
#include <mpi.h>

#include "../collectives/topology.h"

namespace zipper::capi {

/// True when `t` spans more sites than the two-level algorithms join
/// (coll::kMaxSitesSpanned).
inline bool beyond_two_sites(const coll::Topology& t) {
  return t.sites_spanned > coll::kMaxSitesSpanned;
}

/// The blocking form of a non-blocking collective: `start(args..., &r)`
/// (an MMPI_I* entry point), then a wait for r. Returns start's error when
/// it did not start, else the wait's.
template <class Start, class... Args>
int run_schedule(Start start, Args... args) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = start(args..., &r);
  return rc == MPI_SUCCESS ? mmpi_impl_Wait(&r, MPI_STATUS_IGNORE) : rc;
}

/// The agreements communicator creation makes over its parent (or the new
/// members), over any number of sites: the two-level algorithm up to two
/// sites, else a schedule waited for (dissemination barrier; binomial
/// reduce to rank 0 then broadcast; direct exchange). MPI error codes.
int barrier_any(const coll::Topology& t);
int allreduce_any(const coll::Topology& t, const void* in, void* out, int count, MPI_Datatype type,
                  MPI_Op op);
/// `count` elements of `type` from every member, in rank order, into `out`.
int allgather_any(const coll::Topology& t, const void* in, int count, MPI_Datatype type, void* out);

}  // namespace zipper::capi
