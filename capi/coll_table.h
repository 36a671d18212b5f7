// The collective implementations of one kind of communicator (intra- or
// inter-communicator), looked up once at an MPI entry point from the
// communicator's kind, so that no entry point branches on it. The rooted
// transfers (gather and scatter, their v forms, blocking and non-blocking)
// dispatch through it.
#pragma once

#include <mpi.h>

#include "rooted.h"

namespace zipper::capi {

struct CollectiveTable {
  /// MPI_Gather, MPI_Scatter (`a.counts` null: uniform blocks).
  int (*rooted)(const Rooted& a, int root, MPI_Comm comm);
  /// MPI_Gatherv, MPI_Scatterv.
  int (*rooted_v)(const Rooted& a, int root, MPI_Comm comm);
  /// MPI_Igather, MPI_Iscatter.
  int (*irooted)(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request);
  /// MPI_Igatherv, MPI_Iscatterv.
  int (*irooted_v)(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request);
};

/// The implementations for `comm`'s kind: MPI-3.1 §5.2.2's for a live MMPI
/// inter-communicator (capi/intercomm_coll.cpp), else the intra-communicator
/// ones, which also report a handle that is no MMPI communicator
/// (MPI_ERR_COMM) or a call outside MMPI_Init and MMPI_Finalize.
const CollectiveTable& collectives_of(MPI_Comm comm);

// The intra-communicator implementations: two-level algorithms
// (capi/collectives.cpp, capi/collectives_v.cpp) and schedules
// (capi/nbc.cpp). Arguments are checked before anything is communicated.
int intra_rooted(const Rooted& a, int root, MPI_Comm comm);
int intra_rooted_v(const Rooted& a, int root, MPI_Comm comm);
int intra_irooted(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request);
int intra_irooted_v(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request);

/// The inter-communicator rooted transfer, both forms (`a.counts` null:
/// uniform blocks), as a schedule (capi/intercomm_coll.cpp).
int inter_irooted(const Rooted& a, int root, MPI_Comm comm, MPI_Request* request);

}  // namespace zipper::capi
