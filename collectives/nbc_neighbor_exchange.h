#pragma once
#include <vector>

#include "nbc_direct.h"
#include "schedule.h"
namespace zipper::coll {
/// Non-blocking neighbourhood exchange (MPI-3.1 §7.6): one round in which
/// this rank receives recvs[i] from in[i] and sends sends[i] to out[i], for
/// every i (MPI_PROC_NULL, or a block not `used`, moves nothing). Receives
/// and sends are posted in list order with one tag, so that repeated
/// neighbours (a periodic dimension of size 1 or 2, a multigraph) match
/// block for block. On a Cartesian communicator (`cartesian`, lists of
/// pairs: each dimension's -1 then +1 neighbour) each pair's +1 block is
/// sent before its -1 block, so that where both neighbours of a dimension
/// are one process the block sent in the +1 direction meets the receive
/// from the -1 direction, and the other way round: what a shift means, what
/// MPICH expects (coll/ring_neighbor_alltoall on a periodic ring of two) and
/// Open MPI 4.1's blocking forms do (its libnbc Ineighbor_alltoall does
/// not). Every
/// neighbour collective is this exchange: allgather(v) sends one block to
/// all, alltoall(v, w) one block each. Edges to the other cluster go
/// through zipperd, the others natively; each is one point-to-point message.
/// Algorithm: direct sparse exchange (Hoefler and Träff, "Sparse collective
/// operations for MPI", IPDPS 2009 §3).
void nbc_neighbor_exchange(Schedule& s, const std::vector<int>& in, const std::vector<Block>& recvs,
                           const std::vector<int>& out, const std::vector<Block>& sends,
                           bool cartesian);
}  // namespace zipper::coll
