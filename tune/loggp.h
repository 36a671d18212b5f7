// LogGP / pLogP parameters of one link class and how they are derived from
// PRTT(n, d, s) measurements (Hoefler, Lichei, Rehm, "Low-overhead LogGP
// parameter assessment for modern interconnection networks", IPDPS 2007,
// §3), plus protocol-change detection on the measured curve (ibid. §4).
// Pure: no MPI, unit-tested on synthetic curves.
#pragma once

#include <cstdint>
#include <vector>

namespace zipper::tune {

/// The three PRTT measurements at one message size, µs (medians of repeats).
struct PrttSample {
  std::uint64_t bytes = 0;
  double prtt1 = 0;  // PRTT(1, 0, s)
  double prttn = 0;  // PRTT(n, 0, s)
  double prttd = 0;  // PRTT(n, d, s)
  double d = 0;      // the delay d used for prttd, µs (> g(s))
  double o_r = 0;    // receive overhead measured directly (message already there), µs
};

/// pLogP parameters at one message size (Kielmann et al., pLogP), µs.
struct SizePoint {
  std::uint64_t bytes = 0;
  double o_s = 0, o_r = 0, g = 0;
  double rtt = 0;  // PRTT(1, 0, s)
};

/// One link class (intra-A, intra-B, forwarded A<->B).
struct LinkParams {
  double L = 0;                   // latency, µs
  double g0 = 0;                  // LogGP g: gap of the smallest message, µs
  double G = 0;                   // LogGP G: gap per byte at large sizes, µs/byte
  std::vector<SizePoint> points;  // ascending bytes
  /// L under load: the latency a step pays when every rank of the job waits
  /// in a collective at once, from a native barrier (set_load_from_barrier).
  /// On a host with fewer cores than processes a waiting rank is woken by
  /// the scheduler after the others' turns, which a quiet ping-pong does not
  /// see. µs; < 0: not measured.
  double L_load = -1;
  /// G under load: the gap per byte of one of the streams when every rank
  /// of both clusters streams at once (measure.h intra_stream_gaps at a
  /// large size, over that size), µs/byte; 0: not measured. On one host
  /// the emulated links share the cores that move their bytes.
  double G_load = 0;

  /// The latency a model step pays: L under load where measured, else L.
  double lat() const { return L_load >= 0 ? L_load : L; }

  /// pLogP g(m), o_s(m), o_r(m) in µs for m bytes: piecewise linear between
  /// measured sizes, linear with slope G beyond the largest, the smallest
  /// point's value below it; g(m) is at least m·G_load.
  double g(double bytes) const;
  double o_s(double bytes) const;
  double o_r(double bytes) const;
};

/// Derives the parameters from PRTT samples taken with n messages (each
/// sample's own delay d, µs), per Hoefler et al. §3:
///   g(s)   = (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1)
///   o_s(s) = (PRTT(n,d,s) - PRTT(1,0,s)) / (n - 1) - d
///   L      = PRTT(1,0,s) / 2 - g(s)   (Kielmann et al., pLogP), the median
///            over the sizes <= 1 KiB (Kielmann take s_min alone)
///   G      = least-squares slope of g(s) over the sizes >= largest / 4
///            (the largest sizes: a token-bucket burst or a protocol step
///            below them would bias it), at least the two largest.
/// Negative estimates (noise) are clamped to 0. `samples` ascending by size,
/// n >= 2; returns an empty LinkParams (no points) if samples is empty.
LinkParams derive(const std::vector<PrttSample>& samples, int n);

/// Sets p.L_load from a native barrier of P ranks taking t_us µs per call,
/// by pLogP's barrier cost ⌈log2 P⌉·(L + g(0)) (Kielmann et al.; the model's
/// plogp::barrier) solved for L: t_us / ⌈log2 P⌉ - g(0), at least p.L.
/// P < 2 or t_us <= 0: unchanged.
void set_load_from_barrier(LinkParams& p, int P, double t_us);

/// A protocol change seen on the curve (e.g. eager -> rendezvous).
struct Threshold {
  std::uint64_t below = 0, above = 0;  // it lies between these measured sizes, bytes
  double jump_us = 0;                  // excess of PRTT(1,0) over the trend, µs
};

/// Finds the sizes where PRTT(1, 0, s) rises above what the steeper of the
/// neighbouring steps' per-byte slopes predicts by at least `rel` × PRTT at the smaller
/// size and at least `min_jump_us` (Hoefler et al. §4: protocol changes show
/// as steps on the curve). `points` ascending; needs at least 3 points.
std::vector<Threshold> detect_thresholds(const std::vector<SizePoint>& points, double rel = 0.1,
                                         double min_jump_us = 5.0);

}  // namespace zipper::tune
