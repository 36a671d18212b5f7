// pLogP cost models of the collectives in collectives/, built from measured
// link parameters (loggp.h). Pure: no MPI, unit-tested against values
// computed by hand from the papers' formulas. Times in µs, sizes in bytes.
//
// Sources:
//  [BM]  Barchet-Estefanel, Mounié, "Performance characterisation of
//        intra-cluster collective communications", SBAC-PAD 2004, §3 (flat,
//        binomial, segmented chain, scatter) and "Fast tuning of
//        intra-cluster collective communications", EuroPVM/MPI 2004, §4
//        (all-to-all with contention ratio γ).
//  [K]   Kielmann et al., "Network performance-aware collective
//        communication for clustered wide-area systems" (pLogP).
//  [M]   Matsuda et al., "Efficient MPI collective operations for clusters in
//        long-and-fast networks", Cluster 2006, Table 1 (inter-cluster
//        algorithms with n senders).
//  [V]   Vadhiyar, Fagg, Dongarra, "Automatically tuned collective
//        communications", SC 2000, §3 (segmented pipelines).
#pragma once

#include <cstdint>
#include <vector>

#include "../collectives/selection.h"
#include "loggp.h"

namespace zipper::tune {

/// pLogP formulas for P processes on one link class (m: bytes per message).
namespace plogp {
/// [BM] §3.1: root sends to each of P-1 others: (P-1)·g(m) + L.
double flat_bcast(const LinkParams& p, int P, double m);
/// [BM] §3.2: ⌈log2 P⌉·(g(m) + L).
double binomial_bcast(const LinkParams& p, int P, double m);
/// [BM] §3.3: m in k = ⌈m/s⌉ segments through a chain:
/// (P-1)·(g(s) + L) + (k-1)·g(s).
double segmented_chain_bcast(const LinkParams& p, int P, double m, double s);
/// [BM] §3.4: flat scatter of a block of m bytes to each: (P-1)·g(m) + L.
double flat_scatter(const LinkParams& p, int P, double m);
/// [BM] §3.4: binomial scatter, block m per process:
/// ⌈log2 P⌉·L + Σ_{j=0}^{⌈log2 P⌉-1} g(2^j·m).
double binomial_scatter(const LinkParams& p, int P, double m);
/// [BM] (EuroPVM 2004) §4: direct all-to-all, block m, contention ratio γ:
/// γ·(P-1)·g(m) + L.
double alltoall(const LinkParams& p, int P, double m, double gamma);
/// Ring allgather, block m per process ([K]'s composition of P-1 steps):
/// (P-1)·(g(m) + L).
double ring_allgather(const LinkParams& p, int P, double m);
/// Binomial reduce with a reduction cost of op_us per byte ([BM] §3.2
/// applied to reduce): ⌈log2 P⌉·(g(m) + L + m·op_us).
double binomial_reduce(const LinkParams& p, int P, double m, double op_us);
/// Ring reduce-scatter of m bytes in all: (P-1)·(g(m/P) + L + (m/P)·op_us).
double ring_reduce_scatter(const LinkParams& p, int P, double m, double op_us);
/// Dissemination barrier: ⌈log2 P⌉·(g(0) + L).
double barrier(const LinkParams& p, int P);
/// Two-stage pipeline over k segments ([V] §3): the first segment passes
/// both stages, each later one adds the slower stage:
/// a + b + (k-1)·max(a, b).
double pipeline(double stage_a, double stage_b, int k);
}  // namespace plogp

/// Matsuda et al.'s bandwidth-only costs [M] Table 1: L latency (µs), M
/// bytes, n senders, B bandwidth (bytes/µs). For checking the pLogP
/// compositions below against the paper's leading terms.
namespace matsuda {
double vandegeijn(double L, double M, int n, double B);    // L + M/(nB) + 2M/B
double farfirst(double L, double M, double B);             // L + 3M/B
double two_tier(double L, double M, double B);             // L + 5M/B
double rabenseifner(double L, double M, int n, double B);  // L + M/(nB) + 2M/B
}  // namespace matsuda

/// How the concurrent forwarded streams of one step go.
enum class Flow {
  kLowToHigh,  // from the low cluster's ranks to the high cluster's
  kHighToLow,
  kExchange,  // every stream both ways at once (leaders exchanging)
};

/// Measured per-message gap of concurrent forwarded streams at one message
/// size, µs: each stream a burst of non-blocking messages, g = (T(n) -
/// T(1)) / (n - 1) as in Hoefler et al.'s PRTT(n, 0, s) - PRTT(1, 0, s).
/// Every stream, both ways, passes the one zipperd and its two links, so
/// concurrent streams slow each other ([BM] 2004 §4's contention, measured
/// on the forwarder per direction instead of modelled).
struct FwdContention {
  std::uint64_t bytes = 0;  // message size of the experiment
  double alone = 0;         // one stream low -> high
  double low_to_high = 0;   // each of Network::senders_measured streams low -> high
  double high_to_low = 0;   // the same, high -> low
  double exchange1 = 0;     // one pair sending both ways at once
  double exchange = 0;      // senders_measured pairs, both ways
};

/// Everything the models need about the machine.
struct Network {
  LinkParams low, high, forwarded;  // intra-A, intra-B, A<->B through zipperd
  /// [BM] contention ratio of a native all-to-all (measured / flat model), >= 1.
  double gamma_alltoall = 1;
  /// Forwarded contention per message size, ascending bytes (empty: none).
  std::vector<FwdContention> fwd_contention;
  int senders_measured = 1;  // streams of the contention experiments
  /// Bridge nodes (zipperd) the ranks stripe over (docs/rails.md), and how
  /// many the contention experiments ran through. Sender i uses forwarder
  /// i mod k, so n streams over k forwarders load each as n·k_measured/k
  /// streams loaded the measured ones.
  int forwarders = 1;
  int forwarders_measured = 1;
  double op_us_per_byte = 0;  // cost of combining one byte (MPI_SUM on doubles), µs
  /// The job's ranks (and zipperd) share one host whose cores are fewer than
  /// the ranks, as on the emulated clusters: steps that separate nodes run
  /// at once (both clusters' native steps, the near and far branches, native
  /// and forwarded traffic) take turns on the cores, so their times add
  /// instead of the slower one counting. pLogP assumes a processor per
  /// process ([K] §2); this drops that assumption where the host breaks it.
  bool shared_cores = false;

  /// Time of two steps that run at once, µs: max(a, b), or a + b with
  /// shared_cores.
  double concurrent(double a, double b) const;

  /// Per-message gap of one of n concurrent forwarded streams of m-byte
  /// messages going `f`, µs: linear in n between one stream (alone; one
  /// exchanging pair) and senders_measured streams (beyond it extrapolated:
  /// a relay that serves messages one at a time slows each stream in
  /// proportion to n), then linear in m between the measured sizes (below
  /// the smallest its value; above the largest in proportion to m). No
  /// measurement: the forwarded class's g(m). n is first scaled to the
  /// measured forwarders (forwarders above).
  double stream_gap(int n, double m, Flow f) const;
  /// One forwarded transfer of m bytes, as k segments of at most s bytes
  /// posted at once (s = 0: one message), one of n concurrent streams going
  /// `f`: L + k·stream_gap(n, s, f) ([K] with [V]'s segmentation).
  double forward(double m, double s, int n, Flow f) const;
};

/// Predicted time (µs) of one call of collective c with algorithm a: message
/// size `bytes` as the selection sees it (docs/collectives.md), layout x+y,
/// n senders (clamped to 1..min(x, y)), segment size `segment` bytes (0 =
/// unsegmented; ignored by algorithms that take none). Root: virtual rank 0.
/// Each algorithm's formula and its source are in models.cpp next to it.
/// Returns a negative value for an algorithm that does not implement c.
double predict(const Network& net, coll::Collective c, coll::Algorithm a, std::uint64_t bytes,
               int x, int y, int n, std::uint64_t segment);

}  // namespace zipper::tune
