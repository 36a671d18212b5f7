// The measurements of zipper-tune on a running MMPI job: PRTT(n, d, s)
// ping-pongs between two ranks (Hoefler, Lichei, Rehm, IPDPS 2007, §3) and
// the timing of one collective configuration. Every rank of
// MMPI_COMM_WORLD calls every function with the same arguments (the ranks
// not involved only take part in the closing agreement), so results are
// identical on all ranks.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "loggp.h"
#include "models.h"
#include "search.h"

namespace zipper::tune {

struct PrttPlan {
  std::vector<std::uint64_t> sizes;  // bytes, ascending
  int n = 8;                         // messages per PRTT(n, ., s)
  int repeats = 5;                   // medians of this many
};

/// PRTT samples between `client` and `server` (virtual ranks) at every
/// size of the plan; d = PRTT(1, 0, s) (> g(s), as Hoefler et al. require).
/// The other ranks sleep meanwhile, so that on a host with fewer cores than
/// ranks they take no CPU from the link being measured. Collective over
/// MMPI_COMM_WORLD; every rank returns the same samples. Aborts the job on
/// a communication error.
std::vector<PrttSample> measure_prtt(int client, int server, const PrttPlan& plan);

/// Per-stream gap g of `pairs` concurrent forwarded streams, µs per
/// message: pair i is low rank i and high rank x + i; each stream is n
/// non-blocking messages of `bytes` (both ways at once for
/// Flow::kExchange), and g = (T(n) - T(1)) / (n - 1) from the receivers'
/// times as in Hoefler et al.'s PRTT(n, 0, s) - PRTT(1, 0, s); the median
/// over the receivers of medians over repeats. Ranks not in a stream sleep
/// meanwhile. Collective; every rank returns the same value.
double forwarded_stream_gap(int x, int pairs, Flow flow, std::uint64_t bytes, int n);

/// Per-message gap of streams inside both clusters at once, µs: pairs
/// (0,1), (2,3), ... of the low cluster and (x,x+1), ... of the high one, the
/// first of each sending bursts of n non-blocking messages of `bytes` to
/// the second (as forwarded_stream_gap). Every rank of an even-sized
/// cluster streams, as in a collective's bandwidth-bound steps. Returns
/// the median gap of the low cluster's and of the high cluster's streams
/// (0 where a cluster has no pair). Collective.
std::pair<double, double> intra_stream_gaps(int x, std::uint64_t bytes, int n);

/// The forwarded stream gaps at `bytes` (models.h FwdContention): one
/// stream alone and `pairs` streams per flow. Collective.
FwdContention measure_forwarded_contention(int x, int pairs, std::uint64_t bytes, int n);

/// Times one collective call configuration (algorithm, n, segment through
/// MMPIX_Coll_set / MMPIX_Coll_set_segment; `automatic` leaves the library's
/// own choice). Each call starts after a barrier and lasts until the last
/// rank returns (the largest time of any rank); one warm-up call decides
/// the number of calls (about budget_us of calls, 3..max_iters). Returns
/// the median call, µs. Collective; aborts the job on an error.
double time_collective(coll::Collective c, const Config& config, bool automatic,
                       std::uint64_t bytes, double budget_us, int max_iters);

/// Native alltoall on this cluster's MPI_COMM_WORLD, block `bytes`, µs
/// (largest mean of any rank of the cluster), for the contention ratio γ.
double time_native_alltoall(std::uint64_t bytes, int iters);

/// Native MPI_Barrier on this cluster's MPI_COMM_WORLD, both clusters at
/// once, µs per call: the largest median of any rank of the cluster over
/// `iters` calls. Every rank of the job is then in a waiting collective, as
/// in every step of a zipper collective (the latency under load, docs/tuning.md).
double time_native_barrier(int iters);

/// Cost of MPI_SUM on doubles, µs per byte (MPI_Reduce_local over 1 MiB).
double time_reduce_op();

}  // namespace zipper::tune
