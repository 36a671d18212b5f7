// Buffered sends (MPI-3.1 §3.6): the message is packed into the buffer the
// application attached and sent from there, so the call returns at once.
#pragma once

#include <mpi.h>

namespace zipper::capi {

/// Packs the message into the attached buffer (packed size plus
/// MPI_BSEND_OVERHEAD bytes, first fit, space of completed buffered sends
/// reclaimed first) and starts its send. Returns MPI_ERR_BUFFER, sending
/// nothing, when no buffer is attached or the message does not fit; the
/// usual point-to-point errors otherwise.
int bsend_start(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);

}  // namespace zipper::capi
