// What every collective entry point does first and last: check the library
// and the communicator and build the Topology, check buffers, and turn an
// error after communication began into a job abort (see collectives.cpp).
// Shared by the blocking and non-blocking collectives of the C API.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "../collectives/selection.h"
#include "../collectives/topology.h"

namespace zipper::capi {

/// Checks initialisation and the communicator; fills *t. Returns
/// MPI_ERR_OTHER before MMPI_Init, MPI_ERR_COMM for an unknown
/// communicator. A communicator over more than coll::kMaxSitesSpanned sites
/// is fine: its blocking collectives run their schedules (many_sites.h).
int enter(MPI_Comm comm, coll::Topology* t);
/// MPI_ERR_TYPE for MPI_DATATYPE_NULL or a type Open MPI rejects.
int check_type(MPI_Datatype type);
/// MPI_ERR_COUNT for count < 0, else check_type.
int check_buf(int count, MPI_Datatype type);
/// count * size of `type` (bytes).
std::uint64_t bytes_of(int count, MPI_Datatype type);
/// Returns rc; a failure aborts the job with a message naming `what`, the
/// algorithm and n (the other ranks cannot complete the operation).
int finish(const char* what, const coll::Topology& t, coll::Choice ch, int rc);
/// The inter-cluster senders n for `ch`, clamped to the topology.
int senders(const coll::Topology& t, coll::Choice ch);

}  // namespace zipper::capi
