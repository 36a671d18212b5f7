// The measurements of zipper-tune on a running MMPI job: PRTT(n, d, s)
// ping-pongs between two ranks (Hoefler, Lichei, Rehm, IPDPS 2007, §3) and
// the timing of one collective configuration. Every rank of
// MMPI_COMM_WORLD calls every function with the same arguments (the ranks
// not involved only take part in the closing agreement), so results are
// identical on all ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "loggp.h"
#include "search.h"

namespace zipper::tune {

struct PrttPlan {
  std::vector<std::uint64_t> sizes;  // bytes, ascending
  int n = 8;                         // messages per PRTT(n, ., s)
  int repeats = 5;                   // medians of this many
};

/// PRTT samples between `client` and `server` (virtual ranks) at every
/// size of the plan; d = PRTT(1, 0, s) (> g(s), as Hoefler et al. require).
/// Collective over MMPI_COMM_WORLD; every rank returns the same samples.
/// Returns an empty vector on a communication error.
std::vector<PrttSample> measure_prtt(int client, int server, const PrttPlan& plan);

/// Contention of the forwarded class: the per-stream gap g(bytes) of
/// `pairs` streams at once (rank i of the low cluster with rank x + i)
/// over that of one stream alone, each from PRTT(n, 0, s) - PRTT(1, 0, s)
/// (Hoefler et al.), >= 1. Collective.
double measure_forwarded_contention(int x, int pairs, std::uint64_t bytes, int n);

/// Times one collective call configuration (algorithm, n, segment through
/// MMPIX_Coll_set / MMPIX_Coll_set_segment; `automatic` leaves the library's
/// own choice). One warm-up call decides the iteration count (about
/// budget_us of calls, 2..max_iters); returns the largest per-call mean of
/// any rank, µs, or a negative value on an error. Collective.
double time_collective(coll::Collective c, const Config& config, bool automatic,
                       std::uint64_t bytes, double budget_us, int max_iters);

/// Native alltoall on this cluster's MPI_COMM_WORLD, block `bytes`, µs
/// (largest mean of any rank of the cluster), for the contention ratio γ.
double time_native_alltoall(std::uint64_t bytes, int iters);

/// Cost of MPI_SUM on doubles, µs per byte (MPI_Reduce_local over 1 MiB).
double time_reduce_op();

}  // namespace zipper::tune
