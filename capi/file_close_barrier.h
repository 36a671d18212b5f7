// The barrier across the clusters that MMPI_File_close owes (docs/io.md,
// "Close"): started at close, waited for where it matters.
//
// Close synchronises across the clusters (what any rank wrote is in the file
// for whoever opens it after any close returned), but nothing needs that
// before a rank opens a file again. So close starts a non-blocking barrier on
// the file's communicator and returns; the next MMPI_File_open waits for it
// (one that spans the clusters after its first agreement, which every member
// reaches only after its close, so the barrier is as good as done; any other
// at once), and so does MMPI_Finalize.
#pragma once

#include <mpi.h>

namespace zipper::capi {

/// Starts the close barrier on `comm` (a file's MMPI communicator, which the
/// caller may free at once: the barrier keeps it). Returns MPI_SUCCESS or
/// the start's error.
int start_close_barrier(MPI_Comm comm);

/// Waits for every close barrier this process started. Returns MPI_SUCCESS,
/// or the first barrier's error (the peers it waited for failed; the wait is
/// bounded as every collective's is).
int complete_close_barriers();

}  // namespace zipper::capi
