// What libmmpi progresses above the engine, as one round of the runtime's
// progress list (client/progress_list.h):
// the non-blocking collectives' schedules and requests the application
// freed while still active (MMPI_Request_free), plus the completion helpers
// shared by the C entry points that collect requests.
#pragma once

#include <mpi.h>

#include "../client/request.h"
#include "handles.h"

namespace zipper::capi {

/// Adds capi's round to the runtime's progress list (idempotent).
void join_progress();

/// Takes over an active request freed by the application: it completes in
/// the background and is deleted then.
void detach(client::RequestPtr r);

/// Counts persistent requests in flight (delta +1 at start, -1 when
/// collected or freed): while any is, waits poll instead of sleeping.
void note_persistent(int delta);

/// A request that counts for Waitany/Testany/Waitsome/Testsome: not null and
/// not an inactive persistent request.
bool active(MPI_Request h);

/// Collects a completed request: fills
/// `st`, then frees it and sets *h to MPI_REQUEST_NULL, or leaves a
/// persistent request allocated and inactive. Returns the request's error.
int collect(MPI_Request* h, MPI_Status* st);

/// The status of a null or inactive request (source MPI_ANY_SOURCE, tag
/// MPI_ANY_TAG, count 0).
void empty_status(MPI_Status* st);

}  // namespace zipper::capi
