#pragma once
#include <vector>

#include "schedule.h"
namespace zipper::coll {
/// One block of a direct exchange; `used` false: nothing to or from that rank.
struct Block {
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool used = false;
};
/// Non-blocking direct exchange: one round in which this rank receives
/// recvs[r] from and sends sends[r] to every rank r that has one (through
/// zipperd or natively), and copies sends[rank] to recvs[rank] locally when
/// both are used. Gather(v), scatter(v), allgather(v) and alltoall(v, w) are
/// its special cases; correct for any layout. Algorithm: linear (direct)
/// exchange (Thakur et al. 2005 §4.6).
void nbc_direct(Schedule& s, const std::vector<Block>& sends, const std::vector<Block>& recvs);
}  // namespace zipper::coll
