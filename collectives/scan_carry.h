#pragma once
#include "topology.h"
namespace zipper::coll {
/// MPI_Scan (exclusive = false) or MPI_Exscan over `count` elements at
/// sendbuf (never MPI_IN_PLACE here) into recvbuf, for layouts where each
/// cluster's ranks are consecutive (one run each, as in MMPI_COMM_WORLD;
/// scan_runs.h handles the rest). Each cluster scans natively; the last rank
/// of the first cluster sends its inclusive result (the carry) to the
/// second cluster's member 0, which broadcasts it natively; the second
/// cluster combines carry (op) its own prefix. Exscan shifts the inclusive
/// results by one rank natively (the second cluster's member 0 gets the
/// carry) and leaves rank 0's recvbuf untouched. One inter-cluster message,
/// any operation. Algorithm: local scan + carry (Sanders & Träff 2006 §2).
/// Returns an MPI error code.
int scan_carry(const Topology& t, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, bool exclusive);
}  // namespace zipper::coll
