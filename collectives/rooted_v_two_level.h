#pragma once
#include "direction.h"
#include "topology.h"
namespace zipper::coll {
/// MPI_Gatherv to rank `root` (`dir` kToRoot) or MPI_Scatterv from it
/// (kFromRoot). `own`: this rank's block, `own_count` elements of `own_type`
/// (the gather's send buffer, the scatter's receive buffer; MPI_IN_PLACE at
/// the root). `all`, `counts`, `displs` (in elements of `all_type`): the
/// root's blocks, one per rank, significant at the root only.
///
/// The root's cluster gathers or scatters natively (MPI_Igatherv,
/// MPI_Iscatterv) straight from or into the root's buffer. The far cluster's
/// members learn each other's sizes (native allgather of one int64 each);
/// its leader gathers their packed blocks natively and sends them to the
/// root as one message through zipperd, which the root unpacks into place;
/// or the root packs them into one message to the far leader, which
/// scatters them natively. When the far blocks total 2 GiB or more (beyond
/// an int count of bytes), each far rank instead exchanges its block with
/// the root directly, in place on both sides (both decide from the same
/// sum). Algorithm: two-level gather and scatter (MagPIe, Kielmann et al.
/// 1999 §3), as gather_two_level.h and scatter_two_level.h. Returns an MPI
/// error code.
int rooted_v_two_level(Direction dir, const Topology& t, void* own, int own_count,
                       MPI_Datatype own_type, void* all, const int counts[], const int displs[],
                       MPI_Datatype all_type, int root);
}  // namespace zipper::coll
