// MMPI_Finalize's part of the communication profile (MMPI_PROFILE,
// zipper-run --profile; client/traffic_profile.h, docs/placement.md).
#pragma once

#include "../client/runtime.h"

namespace zipper::capi {

/// When a profile ran: stops it, gathers every rank's row to MPI_COMM_WORLD
/// rank 0 over MMPI_COMM_WORLD, which writes the job's matrix (format
/// zipper-comm-matrix, in MPI_COMM_WORLD ranks, with the sites and the
/// site of each rank) to MMPI_PROFILE: a temporary file beside it
/// (O_EXCL, mode 0600), renamed over it when whole. Collective over
/// MMPI_COMM_WORLD. A failure (the other cluster's link lost, the file not
/// writable) is one line on stderr; MMPI_Finalize goes on.
void write_profile_matrix(client::Runtime& rt);

}  // namespace zipper::capi
