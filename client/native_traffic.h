// The profile's hook on the collectives libmmpi runs natively inside a site
// (the intra-cluster steps of every hierarchical collective, MPI-IO's and
// Comm_split_type's small agreements). Every libmmpi source reaches Open MPI
// through capi/gen's mmpi_pmpi.h, which maps each data-moving collective
// MPI_X to mmpi_traffic_X (native_traffic.cpp): that one place sees every
// native collective. While a profile runs, each call adds what this rank
// sends by the collective's data flow (the convention of Open MPI's own
// coll/monitoring component, as a PMPI tool sees it): a root's bcast and
// scatter to every other member, every member's reduce and gather to the
// root, allreduce, allgather, alltoall and reduce_scatter from every member
// to every other, scan and exscan to every higher rank; one message per
// peer. How Open MPI's algorithm routes the bytes (trees, rings) is below
// what a call can see. Barriers move no data and are not counted.
//
// Off (no profile), each wrapped call costs one atomic load and a branch
// before the PMPI_ call.
#pragma once

#include "traffic_profile.h"

namespace zipper::client {

/// Counts native collectives into `p` from now on; `local_first` is the
/// virtual rank of this site's native rank 0. Call with MPI running.
void native_traffic_start(TrafficProfile* p, int local_first);
/// Stops counting (before the profile is gathered or destroyed).
void native_traffic_stop();

}  // namespace zipper::client
