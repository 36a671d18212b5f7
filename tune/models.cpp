#include "models.h"

#include <algorithm>
#include <cmath>

namespace zipper::tune {
namespace {

int log2_ceil(int P) {
  int k = 0;
  while ((1 << k) < P) ++k;
  return k;
}

int segments_of(double m, double s) {
  return s > 0 && m > s ? static_cast<int>(std::ceil(m / s)) : 1;
}

}  // namespace

namespace plogp {

double flat_bcast(const LinkParams& p, int P, double m) {
  return P <= 1 ? 0 : (P - 1) * p.g(m) + p.lat();
}

double binomial_bcast(const LinkParams& p, int P, double m) {
  return log2_ceil(P) * (p.g(m) + p.lat());
}

double segmented_chain_bcast(const LinkParams& p, int P, double m, double s) {
  if (P <= 1) return 0;
  const int k = segments_of(m, s);
  const double seg = k > 1 ? s : m;
  return (P - 1) * (p.g(seg) + p.lat()) + (k - 1) * p.g(seg);
}

double flat_scatter(const LinkParams& p, int P, double m) {
  return P <= 1 ? 0 : (P - 1) * p.g(m) + p.lat();
}

double binomial_scatter(const LinkParams& p, int P, double m) {
  const int steps = log2_ceil(P);
  double t = steps * p.lat();
  for (int j = 0; j < steps; ++j) t += p.g(std::ldexp(m, j));
  return t;
}

double alltoall(const LinkParams& p, int P, double m, double gamma) {
  return P <= 1 ? 0 : gamma * (P - 1) * p.g(m) + p.lat();
}

double ring_allgather(const LinkParams& p, int P, double m) {
  return P <= 1 ? 0 : (P - 1) * (p.g(m) + p.lat());
}

double binomial_reduce(const LinkParams& p, int P, double m, double op_us) {
  return log2_ceil(P) * (p.g(m) + p.lat() + m * op_us);
}

double ring_reduce_scatter(const LinkParams& p, int P, double m, double op_us) {
  if (P <= 1) return 0;
  const double piece = m / P;
  return (P - 1) * (p.g(piece) + p.lat() + piece * op_us);
}

double barrier(const LinkParams& p, int P) { return log2_ceil(P) * (p.g(0) + p.lat()); }

double pipeline(double a, double b, int k) { return a + b + (k - 1) * std::max(a, b); }

}  // namespace plogp

namespace matsuda {
double vandegeijn(double L, double M, int n, double B) { return L + M / (n * B) + 2 * M / B; }
double farfirst(double L, double M, double B) { return L + 3 * M / B; }
double two_tier(double L, double M, double B) { return L + 5 * M / B; }
double rabenseifner(double L, double M, int n, double B) { return L + M / (n * B) + 2 * M / B; }
}  // namespace matsuda

double Network::stream_gap(int n_streams, double m, Flow f) const {
  if (fwd_contention.empty()) return forwarded.g(m);
  // The same load per forwarder as n·k_measured/k streams had when measured.
  const double n =
      static_cast<double>(n_streams) * std::max(1, forwarders_measured) / std::max(1, forwarders);
  const auto at = [&](const FwdContention& c) {
    double one = c.alone, many = c.low_to_high;
    if (f == Flow::kHighToLow) many = c.high_to_low;
    if (f == Flow::kExchange) {
      one = c.exchange1;
      many = c.exchange;
    }
    if (n <= 1 || senders_measured <= 1) return one;
    const double w = (n - 1) / (senders_measured - 1);
    return std::max(0.0, one + w * (many - one));
  };
  const auto& v = fwd_contention;
  if (m <= static_cast<double>(v.front().bytes)) return at(v.front());
  for (std::size_t i = 1; i < v.size(); ++i) {
    const double b0 = static_cast<double>(v[i - 1].bytes), b1 = static_cast<double>(v[i].bytes);
    if (m <= b1) {
      const double w = (m - b0) / (b1 - b0);
      return at(v[i - 1]) + w * (at(v[i]) - at(v[i - 1]));
    }
  }
  return at(v.back()) * m / static_cast<double>(std::max<std::uint64_t>(1, v.back().bytes));
}

double Network::concurrent(double a, double b) const {
  return shared_cores ? a + b : std::max(a, b);
}

double Network::forward(double m, double s, int n, Flow f) const {
  const int k = segments_of(m, s);
  const double seg = k > 1 ? s : m;
  return forwarded.lat() + k * stream_gap(n, seg, f);
}

namespace {

using coll::Algorithm;
using coll::Collective;

// Both clusters run their native steps at once; the slower one counts
// (unless they share the host's cores: Network::concurrent).
template <typename F>
double both(const Network& net, int x, int y, F f) {
  return net.concurrent(f(net.low, x), f(net.high, y));
}

// barrier two_level: local barrier, leaders exchange 0 bytes, local barrier
// (thesis / MagPIe; pLogP terms [K]).
double barrier_two_level(const Network& net, int x, int y) {
  const auto b = [](const LinkParams& p, int P) { return plogp::barrier(p, P); };
  return 2 * both(net, x, y, b) + net.forward(0, 0, 1, Flow::kExchange);
}

// bcast farfirst, [M] Table 1 "L + 3M/B": root -> far leader (forwarded),
// native binomial bcast in each cluster [BM §3.2]. Segmented: far transfer
// and far bcast form a two-stage pipeline [V §3].
double bcast_farfirst(const Network& net, double m, int x, int y, double s) {
  const int k = segments_of(m, s);
  const double seg = k > 1 ? s : m;
  const double near = plogp::binomial_bcast(net.low, x, m);
  const double hop = net.forwarded.lat() + net.forwarded.g(seg);
  const double far = plogp::pipeline(hop, plogp::binomial_bcast(net.high, y, seg), k);
  return net.concurrent(near, far);
}

// bcast vandegeijn, [M] Table 1 "L + M/nB + 2M/B": scatter into n segments
// (binomial scatter [BM §3.4], block M/n), n concurrent forwarded transfers
// of M/n, ring allgather in each cluster (block M/P).
double bcast_vandegeijn(const Network& net, double m, int x, int y, int n, double s) {
  const double scatter = plogp::binomial_scatter(net.low, n, m / n);
  const double near = plogp::ring_allgather(net.low, x, m / x);
  const double far =
      net.forward(m / n, s, n, Flow::kLowToHigh) + plogp::ring_allgather(net.high, y, m / y);
  return scatter + net.concurrent(near, far);
}

// reduce leaders: native binomial reduce in each cluster [BM §3.2], the far
// partial forwarded to the root, one combine. Segmented: far reduce and
// forwarded transfer pipeline [V §3].
double reduce_leaders(const Network& net, double m, int x, int y, double s, double op) {
  const int k = segments_of(m, s);
  const double seg = k > 1 ? s : m;
  const double near = plogp::binomial_reduce(net.low, x, m, op);
  const double hop = net.forwarded.lat() + net.forwarded.g(seg);
  const double far = plogp::pipeline(plogp::binomial_reduce(net.high, y, seg, op), hop, k);
  return net.concurrent(near, far) + m * op;
}

// allreduce two_tier, [M] Table 1 "L + 5M/B": native reduce, leaders
// exchange M (forwarded, both ways at once), combine, native bcast.
double allreduce_two_tier(const Network& net, double m, int x, int y, double s, double op) {
  const auto red = [&](const LinkParams& p, int P) { return plogp::binomial_reduce(p, P, m, op); };
  const auto bc = [&](const LinkParams& p, int P) { return plogp::binomial_bcast(p, P, m); };
  return both(net, x, y, red) + net.forward(m, s, 1, Flow::kExchange) + m * op +
         both(net, x, y, bc);
}

// allreduce rabenseifner, [M] Table 1 "L + M/nB + 2M/B": ring
// reduce-scatter, pieces gathered at n leaders (flat, block M/P [BM §3.4]),
// n forwarded exchanges of M/n, combine, hand back, ring allgather.
double allreduce_rabenseifner(const Network& net, double m, int x, int y, int n, double s,
                              double op) {
  const auto rs = [&](const LinkParams& p, int P) {
    return plogp::ring_reduce_scatter(p, P, m, op) + plogp::flat_scatter(p, P / n, m / P);
  };
  const auto ag = [&](const LinkParams& p, int P) {
    return plogp::flat_scatter(p, P / n, m / P) + plogp::ring_allgather(p, P, m / P);
  };
  return both(net, x, y, rs) + net.forward(m / n, s, n, Flow::kExchange) + (m / n) * op +
         both(net, x, y, ag);
}

// alltoall direct: native all-to-all [BM 2004 §4] overlapped with every
// rank's y (x) forwarded blocks; x ranks share the forwarder.
double alltoall_direct(const Network& net, double m, int x, int y) {
  const auto a2a = [&](const LinkParams& p, int P) {
    return plogp::alltoall(p, P, m, net.gamma_alltoall);
  };
  const int senders = std::min(x, y);
  const double cross =
      net.forwarded.lat() + std::max(x, y) * net.stream_gap(senders, m, Flow::kExchange);
  return net.concurrent(both(net, x, y, a2a), cross);
}

// alltoall aggregated: native alltoallv to n aggregators (each receives
// P/n blocks of y·m, flat [BM §3.4]), n forwarded transfers of x·y·m/n,
// native deal-out likewise.
double alltoall_aggregated(const Network& net, double m, int x, int y, int n, double s) {
  const auto gather = [&](const LinkParams& p, int P) {
    const int other = &p == &net.low ? y : x;
    return plogp::flat_scatter(p, std::max(2, P / n), other * m);
  };
  const double a2a = net.concurrent(plogp::alltoall(net.low, x, m, net.gamma_alltoall),
                                    plogp::alltoall(net.high, y, m, net.gamma_alltoall));
  const double agg = both(net, x, y, gather) +
                     net.forward(double(x) * y * m / n, s, n, Flow::kExchange) +
                     both(net, x, y, gather);
  return net.concurrent(a2a, agg);
}

}  // namespace

double predict(const Network& net, Collective c, Algorithm a, std::uint64_t bytes, int x, int y,
               int n, std::uint64_t segment) {
  bool implements = false;
  for (const auto& t : coll::algorithms_for(c)) implements |= t.algorithm == a;
  if (!implements) return -1;
  n = std::clamp(n, 1, std::max(1, std::min(x, y)));
  const double m = static_cast<double>(bytes), s = static_cast<double>(segment);
  const double op = net.op_us_per_byte;
  switch (a) {
    case Algorithm::kTwoLevel: {
      if (c == Collective::kBarrier) return barrier_two_level(net, x, y);
      // gather, scatter, allgather: a flat native step [BM §3.4] in each
      // cluster and the far cluster's blocks in one forwarded message.
      const auto flat = [&](const LinkParams& p, int P) { return plogp::flat_scatter(p, P, m); };
      return both(net, x, y, flat) + net.forward(m * std::max(x, y), 0, 1, Flow::kLowToHigh);
    }
    case Algorithm::kFarfirst:
      return bcast_farfirst(net, m, x, y, s);
    case Algorithm::kVanDeGeijn:
      return bcast_vandegeijn(net, m, x, y, n, s);
    case Algorithm::kLeaders:
      return reduce_leaders(net, m, x, y, s, op);
    case Algorithm::kTwoTier:
      return allreduce_two_tier(net, m, x, y, s, op);
    case Algorithm::kRabenseifner:
      return allreduce_rabenseifner(net, m, x, y, n, s, op);
    case Algorithm::kDirect:
      return alltoall_direct(net, m, x, y);
    case Algorithm::kAggregated:
      return alltoall_aggregated(net, m, x, y, n, s);
    case Algorithm::kViaAllreduce:
      return allreduce_rabenseifner(net, m, x, y, n, s, op);
  }
  return -1;
}

}  // namespace zipper::tune
