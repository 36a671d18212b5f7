#pragma once
#include "schedule.h"
namespace zipper::coll {
/// Non-blocking scan (exclusive = false) or exscan of `count` elements at
/// `sendbuf` (never MPI_IN_PLACE here) into `recvbuf`: in round k rank r
/// sends its partial (ranks (r - 2^k, r]) to r + 2^k and combines the one
/// from r - 2^k on the left, so the order is the rank order for any
/// operation and layout. Exscan adds one round shifting the inclusive
/// results by one rank; rank 0's recvbuf is left untouched. Algorithm:
/// recursive doubling scan (Hillis & Steele 1986, §2.1).
void nbc_scan_doubling(Schedule& s, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, bool exclusive);
}  // namespace zipper::coll
