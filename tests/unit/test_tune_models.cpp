// tune/: the pLogP models against values computed by hand from the papers'
// formulas (with the measured forwarded stream gaps and the latency under
// load), the run figures, the LogGP derivation from synthetic PRTT curves (Hoefler et
// al.), protocol-step detection, the hill-descent search on a known
// landscape, and the tuning file zipper-tune writes read back by the
// selection (including the segment size).
#include <gtest/gtest.h>

#include <cmath>

#include "collectives/selection.h"
#include "tune/loggp.h"
#include "tune/metrics.h"
#include "tune/models.h"
#include "tune/search.h"
#include "tune/tuning_file.h"

namespace zipper::tune {
namespace {

using coll::Algorithm;
using coll::Collective;

// L = 10 µs, g(m) = 2 + 0.01·m µs on [0, 1 MiB] (linear, so interpolation is exact).
LinkParams linear_link() {
  LinkParams p;
  p.L = 10;
  p.G = 0.01;
  p.g0 = 2;
  p.points = {{0, 0, 0, 2, 0}, {1048576, 0, 0, 2 + 0.01 * 1048576, 0}};
  return p;
}

TEST(TuneModels, PlogpFormulasMatchHandValues) {
  const LinkParams p = linear_link();
  EXPECT_DOUBLE_EQ(p.g(1000), 12);
  // [BM] flat: (P-1)·g(m) + L = 3·12 + 10
  EXPECT_DOUBLE_EQ(plogp::flat_bcast(p, 4, 1000), 46);
  // [BM] binomial: ⌈log2 P⌉·(g(m) + L) = 2·22, and 3·22 for P = 5
  EXPECT_DOUBLE_EQ(plogp::binomial_bcast(p, 4, 1000), 44);
  EXPECT_DOUBLE_EQ(plogp::binomial_bcast(p, 5, 1000), 66);
  // [BM] segmented chain: (P-1)·(g(s)+L) + (k-1)·g(s), k = 4: 3·22 + 3·12
  EXPECT_DOUBLE_EQ(plogp::segmented_chain_bcast(p, 4, 4000, 1000), 102);
  // [BM] binomial scatter: ⌈log2 P⌉·L + g(m) + g(2m) = 20 + 12 + 22
  EXPECT_DOUBLE_EQ(plogp::binomial_scatter(p, 4, 1000), 54);
  // [BM] flat scatter: (P-1)·g(m) + L
  EXPECT_DOUBLE_EQ(plogp::flat_scatter(p, 3, 1000), 34);
  // [BM 2004] all-to-all with γ = 1.5: γ·(P-1)·g(m) + L = 1.5·36 + 10
  EXPECT_DOUBLE_EQ(plogp::alltoall(p, 4, 1000, 1.5), 64);
  // ring allgather: (P-1)·(g(m) + L)
  EXPECT_DOUBLE_EQ(plogp::ring_allgather(p, 4, 1000), 66);
  // binomial reduce with 0.001 µs/B: 2·(12 + 10 + 1)
  EXPECT_DOUBLE_EQ(plogp::binomial_reduce(p, 4, 1000, 0.001), 46);
  // [V] two-stage pipeline: a + b + (k-1)·max(a, b)
  EXPECT_DOUBLE_EQ(plogp::pipeline(3, 5, 4), 23);
  EXPECT_DOUBLE_EQ(plogp::pipeline(3, 5, 1), 8);
}

TEST(TuneModels, MatsudaTable) {
  // L = 100 µs, M = 10^6 B, n = 4, B = 125 B/µs (1 Gbit/s)
  EXPECT_DOUBLE_EQ(matsuda::vandegeijn(100, 1e6, 4, 125), 100 + 2000 + 16000);
  EXPECT_DOUBLE_EQ(matsuda::farfirst(100, 1e6, 125), 100 + 24000);
  EXPECT_DOUBLE_EQ(matsuda::two_tier(100, 1e6, 125), 100 + 40000);
  EXPECT_DOUBLE_EQ(matsuda::rabenseifner(100, 1e6, 4, 125), 100 + 2000 + 16000);
}

Network linear_network() {
  Network net;
  net.low = net.high = net.forwarded = linear_link();
  net.senders_measured = 4;
  // Stream gaps (µs per message) at 1000 B and 100000 B: alone, 4 streams
  // low -> high, 4 high -> low, one exchanging pair, 4 exchanging pairs.
  net.fwd_contention = {{1000, 12, 30, 48, 20, 60}, {100000, 1002, 2004, 4008, 1500, 3000}};
  return net;
}

TEST(TuneModels, ForwardedStreamGapsAndSegments) {
  const Network net = linear_network();
  // At a measured size: one stream alone, 4 streams, and linear in n between.
  EXPECT_DOUBLE_EQ(net.stream_gap(1, 1000, Flow::kLowToHigh), 12);
  EXPECT_DOUBLE_EQ(net.stream_gap(4, 1000, Flow::kLowToHigh), 30);
  EXPECT_DOUBLE_EQ(net.stream_gap(2, 1000, Flow::kLowToHigh), 12 + 18.0 / 3);
  EXPECT_DOUBLE_EQ(net.stream_gap(4, 1000, Flow::kHighToLow), 48);
  EXPECT_DOUBLE_EQ(net.stream_gap(1, 1000, Flow::kExchange), 20);
  EXPECT_DOUBLE_EQ(net.stream_gap(4, 1000, Flow::kExchange), 60);
  // Beyond the measured senders: extrapolated, 8 streams = 12 + 7·6.
  EXPECT_DOUBLE_EQ(net.stream_gap(8, 1000, Flow::kLowToHigh), 54);
  // Between sizes linear in m (halfway: 12 + 990/2); below the smallest its
  // value; above the largest in proportion to m.
  EXPECT_DOUBLE_EQ(net.stream_gap(1, 50500, Flow::kLowToHigh), 507);
  EXPECT_DOUBLE_EQ(net.stream_gap(4, 10, Flow::kExchange), 60);
  EXPECT_DOUBLE_EQ(net.stream_gap(4, 200000, Flow::kHighToLow), 8016);
  // k = 4 segments of 1000 B, one stream: L + 4·12; unsegmented 4000 B:
  // L + (12 + 3000/99000·990).
  EXPECT_DOUBLE_EQ(net.forward(4000, 1000, 1, Flow::kLowToHigh), 10 + 4 * 12);
  EXPECT_DOUBLE_EQ(net.forward(4000, 0, 1, Flow::kLowToHigh), 10 + 42);
  EXPECT_DOUBLE_EQ(net.forward(4000, 1000, 4, Flow::kExchange), 10 + 4 * 60);
  // Measured through one forwarder, predicted for two: 8 streams
  // load each forwarder as 4 did the one, and 2 streams as one did.
  Network two = net;
  two.forwarders = 2;
  EXPECT_DOUBLE_EQ(two.stream_gap(8, 1000, Flow::kLowToHigh), 30);
  EXPECT_DOUBLE_EQ(two.stream_gap(2, 1000, Flow::kLowToHigh), 12);
  two.forwarders_measured = 2;  // measured through both: as measured
  EXPECT_DOUBLE_EQ(two.stream_gap(4, 1000, Flow::kLowToHigh), 30);
  // No contention measured: the forwarded class's g(m).
  Network plain = net;
  plain.fwd_contention.clear();
  EXPECT_DOUBLE_EQ(plain.stream_gap(4, 1000, Flow::kExchange), 12);
}

TEST(TuneModels, ParametersUnderLoad) {
  LinkParams p = linear_link();  // L = 10, g(0) = 2
  EXPECT_DOUBLE_EQ(p.lat(), 10);
  // P = 4: ⌈log2 4⌉ = 2 rounds; 100 µs per barrier: 100/2 - g(0) = 48.
  set_load_from_barrier(p, 4, 100);
  EXPECT_DOUBLE_EQ(p.L_load, 48);
  EXPECT_DOUBLE_EQ(p.lat(), 48);
  // The model's barrier on these parameters gives the measured time back.
  EXPECT_DOUBLE_EQ(plogp::barrier(p, 4), 100);
  // P = 5: 3 rounds, 90/3 - 2 = 28; a barrier faster than the quiet L gives L.
  set_load_from_barrier(p, 5, 90);
  EXPECT_DOUBLE_EQ(p.L_load, 28);
  set_load_from_barrier(p, 4, 10);
  EXPECT_DOUBLE_EQ(p.L_load, 10);
  // Nothing to learn from one rank or no time: unchanged.
  LinkParams q = linear_link();
  set_load_from_barrier(q, 1, 100);
  set_load_from_barrier(q, 4, 0);
  EXPECT_LT(q.L_load, 0);
  // Every model step pays lat(): binomial bcast 2·(g(1000) + 48).
  EXPECT_DOUBLE_EQ(plogp::binomial_bcast(p, 4, 1000), 2 * (12 + 10));
  q.L_load = 48;
  EXPECT_DOUBLE_EQ(plogp::binomial_bcast(q, 4, 1000), 2 * (12 + 48));
  // G under load 0.02 µs/B: g(m) is at least m·G_load (20 at 1000 B; at
  // 100 B the quiet 2 + 0.01·100 = 3 is larger).
  q.G_load = 0.02;
  EXPECT_DOUBLE_EQ(q.g(1000), 20);
  EXPECT_DOUBLE_EQ(q.g(100), 3);
  EXPECT_DOUBLE_EQ(plogp::flat_bcast(q, 3, 1000), 2 * 20 + 48);
}

TEST(TuneMetrics, FiguresOfARun) {
  std::vector<PointOutcome> pts(4);
  // bcast 8: errors 0.1 and 0.5; pick 105 against best 100 (within 10 %).
  pts[0] = {"bcast", 8, {90, 300}, {100, 200}, false, 105, 100, 100, 100};
  // bcast 16: error 0.5 (too low); pick 150 against 100; tuned 80, built-in 100.
  pts[1] = {"bcast", 16, {50}, {100}, false, 150, 100, 80, 100};
  // reduce 8: error 0.2; the pick is the best; tuned 110 against built-in 100.
  pts[2] = {"reduce", 8, {120}, {100}, true, 100, 100, 110, 100};
  // reduce 16: the pick was never measured; no times.
  pts[3] = {"reduce", 16, {}, {}, false, -1, 100, -1, -1};
  const RunFigures f = run_figures(pts);
  EXPECT_EQ(f.errors, 4);
  EXPECT_DOUBLE_EQ(f.median_error, (0.2 + 0.5) / 2);          // of 0.1, 0.2, 0.5, 0.5
  EXPECT_DOUBLE_EQ(f.median_signed_error, (-0.1 + 0.2) / 2);  // of -0.5, -0.1, 0.2, 0.5
  EXPECT_EQ(f.picks_differ, 3);
  EXPECT_EQ(f.picks_within_10, 1);
  EXPECT_EQ(f.picks_unmeasured, 1);
  EXPECT_DOUBLE_EQ(f.worst_pick_ratio, 1.5);
  ASSERT_EQ(f.per_collective.size(), 2u);
  EXPECT_EQ(f.per_collective[0].collective, "bcast");
  EXPECT_EQ(f.per_collective[0].points, 2);
  EXPECT_DOUBLE_EQ(f.per_collective[0].speedup_geomean, std::sqrt(1.25));
  EXPECT_DOUBLE_EQ(f.per_collective[0].worst_tuned_ratio, 1.0);
  EXPECT_EQ(f.per_collective[0].worst_bytes, 8u);
  EXPECT_EQ(f.per_collective[1].points, 1);
  EXPECT_DOUBLE_EQ(f.per_collective[1].speedup_geomean, 100.0 / 110);
  EXPECT_DOUBLE_EQ(f.per_collective[1].worst_tuned_ratio, 1.1);
  EXPECT_DOUBLE_EQ(f.worst_tuned_ratio, 1.1);
  EXPECT_EQ(run_figures({}).errors, 0);
}

TEST(TuneModels, FarfirstUnsegmentedAndPipelined) {
  const Network net = linear_network();
  // 2+2, 1000 B: near = binomial(2) = 22; far = hop (10 + 12) + bcast 22.
  EXPECT_DOUBLE_EQ(predict(net, Collective::kBcast, Algorithm::kFarfirst, 1000, 2, 2, 0, 0), 44);
  // 10^6 B: g = 10002. Unsegmented far = 10012 + 10012; in 10 segments of
  // 10^5 B (g = 1002): pipeline(1012, 1012, 10) = 2024 + 9·1012.
  EXPECT_DOUBLE_EQ(predict(net, Collective::kBcast, Algorithm::kFarfirst, 1000000, 2, 2, 0, 0),
                   20024);
  EXPECT_DOUBLE_EQ(predict(net, Collective::kBcast, Algorithm::kFarfirst, 1000000, 2, 2, 0, 100000),
                   11132);
}

TEST(TuneModels, SharedCoresAddStepsThatRunAtOnce) {
  Network net = linear_network();
  EXPECT_DOUBLE_EQ(net.concurrent(3, 5), 5);
  net.shared_cores = true;
  EXPECT_DOUBLE_EQ(net.concurrent(3, 5), 8);
  // farfirst 2+2, 1000 B: near 22 and far 44 take turns on the cores: 66
  // instead of 44. The far branch's own pipeline is one rank's receive and
  // forward and still overlaps: 10 segments as above, 11132, plus near
  // 10012 (binomial bcast of 10^6 B on 2 ranks: g 10002 + L 10).
  EXPECT_DOUBLE_EQ(predict(net, Collective::kBcast, Algorithm::kFarfirst, 1000, 2, 2, 0, 0), 66);
  EXPECT_DOUBLE_EQ(predict(net, Collective::kBcast, Algorithm::kFarfirst, 1000000, 2, 2, 0, 100000),
                   11132 + 10012);
}

TEST(TuneModels, EveryAlgorithmOfTheLibraryHasAModel) {
  const Network net = linear_network();
  for (int i = 0; i < coll::kNumCollectives; ++i) {
    const auto c = static_cast<Collective>(i);
    for (const auto& a : coll::algorithms_for(c)) {
      const double t = predict(net, c, a.algorithm, 65536, 4, 4, 2, a.takes_segment ? 16384 : 0);
      EXPECT_GT(t, 0) << coll::name_of(c) << " " << a.name;
      EXPECT_TRUE(std::isfinite(t));
    }
  }
  EXPECT_LT(predict(net, Collective::kBcast, Algorithm::kRabenseifner, 1, 2, 2, 1, 0), 0);
}

TEST(TuneLoggp, DerivationRecoversKnownParameters) {
  // L = 20 µs, o_s = 3 µs, g(s) = 5 + 0.008·s; PRTT(1,0,s) = 2·(L + g(s))
  // (pLogP), PRTT(n,0,s) = PRTT(1) + (n-1)·g(s), PRTT(n,d,s) = PRTT(1) +
  // (n-1)·(o_s + d) with d = PRTT(1) > g(s).
  const int n = 8;
  std::vector<PrttSample> s;
  for (std::uint64_t b = 1; b <= (1u << 22); b *= 4) {
    const double g = 5 + 0.008 * b, p1 = 2 * (20 + g);
    s.push_back({b, p1, p1 + (n - 1) * g, p1 + (n - 1) * (3 + p1), p1, 1.5});
  }
  const LinkParams p = derive(s, n);
  EXPECT_NEAR(p.L, 20, 1e-6);
  EXPECT_NEAR(p.G, 0.008, 1e-9);
  EXPECT_NEAR(p.g0, 5.008, 1e-9);
  for (const auto& pt : p.points) {
    EXPECT_NEAR(pt.o_s, 3, 1e-6);
    EXPECT_NEAR(pt.o_r, 1.5, 1e-12);
  }
  EXPECT_NEAR(p.g(1 << 23), 5 + 0.008 * (1 << 23), 1e-3);  // extrapolated with G
  EXPECT_TRUE(derive({}, n).points.empty());
}

TEST(TuneLoggp, DetectsProtocolStep) {
  // Linear RTT with a 40 µs step between 16 KiB and 32 KiB (e.g. eager -> rendezvous).
  std::vector<SizePoint> pts;
  for (std::uint64_t b = 1; b <= (1u << 20); b *= 2) {
    SizePoint p;
    p.bytes = b;
    p.rtt = 30 + 0.01 * b + (b >= 32768 ? 40 : 0);
    pts.push_back(p);
  }
  const auto th = detect_thresholds(pts);
  ASSERT_EQ(th.size(), 1u);
  EXPECT_EQ(th[0].below, 16384u);
  EXPECT_EQ(th[0].above, 32768u);
  EXPECT_NEAR(th[0].jump_us, 40, 1e-6);
  for (auto& p : pts) p.rtt = 30 + 0.01 * p.bytes;  // no step: nothing found
  EXPECT_TRUE(detect_thresholds(pts).empty());
  // A bend (the wire starts to dominate: 0.001 -> 0.01 µs/B, continuous) is no step.
  for (auto& p : pts)
    p.rtt = p.bytes <= 65536 ? 30 + 0.001 * p.bytes : 30 + 65.536 + 0.01 * (p.bytes - 65536.0);
  EXPECT_TRUE(detect_thresholds(pts).empty());
}

TEST(TuneSearch, HillDescentFindsTheOptimumWithFewExperiments) {
  SearchSpace space{coll::algorithms_for(Collective::kBcast), 4, {0, 16384, 65536, 262144}};
  // True costs: unique minimum at vandegeijn n = 3, 64 KiB; farfirst worse.
  auto seg_index = [&](std::uint64_t s) {
    for (std::size_t i = 0; i < space.segments.size(); ++i)
      if (space.segments[i] == s) return static_cast<int>(i);
    return -1;
  };
  auto truth = [&](const Config& c) {
    if (c.algorithm == Algorithm::kFarfirst) return 500.0 + 10 * seg_index(c.segment);
    return 100.0 + 10 * std::abs(c.n - 3) + 7 * std::abs(seg_index(c.segment) - 2);
  };
  // The model is off by one step: it prefers n = 4, 16 KiB.
  auto model = [&](const Config& c) {
    if (c.algorithm == Algorithm::kFarfirst) return 400.0;
    return 100.0 + 10 * std::abs(c.n - 4) + 7 * std::abs(seg_index(c.segment) - 1);
  };
  int calls = 0;
  auto measure = [&](const Config& c) {
    ++calls;
    return truth(c);
  };
  const SearchResult r = search_point(space, model, measure, 2, nullptr, 50);
  const auto grid = full_grid(space);
  EXPECT_EQ(grid.size(), 4u + 4 * 4);  // farfirst × 4 segments + vandegeijn × n × segments
  EXPECT_EQ(r.candidates.size(), grid.size());
  EXPECT_EQ(r.best, (Config{Algorithm::kVanDeGeijn, 3, 65536}));
  EXPECT_DOUBLE_EQ(r.best_us, 100);
  EXPECT_EQ(r.model_pick, (Config{Algorithm::kVanDeGeijn, 4, 16384}));
  EXPECT_EQ(r.experiments, calls);
  EXPECT_LT(r.experiments, static_cast<int>(grid.size()));
  // Pruning: farfirst (model 400 against 100) is not measured at prune 2.
  calls = 0;
  const SearchResult pr = search_point(space, model, measure, 2, nullptr, 50, 2.0);
  EXPECT_EQ(pr.best, (Config{Algorithm::kVanDeGeijn, 3, 65536}));
  for (const auto& k : pr.candidates)
    if (k.config.algorithm == Algorithm::kFarfirst) {
      EXPECT_LT(k.measured_us, 0);
    }
  EXPECT_LT(pr.experiments, r.experiments);
  // The cap holds.
  calls = 0;
  EXPECT_EQ(search_point(space, model, measure, 2, nullptr, 3).experiments, 3);
  EXPECT_EQ(calls, 3);
}

TEST(TuneTuningFile, WrittenFileIsReadBackAndChangesTheChoice) {
  const std::vector<TunedPoint> pts = {
      {Collective::kBcast, 8, {Algorithm::kVanDeGeijn, 1, 0}},
      {Collective::kBcast, 4096, {Algorithm::kVanDeGeijn, 1, 0}},
      {Collective::kBcast, 65536, {Algorithm::kFarfirst, 0, 16384}},
      {Collective::kAllreduce, 8, {Algorithm::kRabenseifner, 2, 65536}},
  };
  const std::string text = tuning_toml(pts, 2, 2, {"test"});
  coll::Selection sel;
  std::string why;
  ASSERT_TRUE(sel.load_tuning(text, "tuned.toml", &why)) << why << "\n" << text;
  // Built-in rules would give farfirst below 16 KiB and vandegeijn above.
  auto c = sel.choose(Collective::kBcast, 100, {2, 2});
  EXPECT_EQ(c.algorithm, Algorithm::kVanDeGeijn);
  EXPECT_EQ(c.inter_senders, 1);
  EXPECT_EQ(c.segment, 0u);
  c = sel.choose(Collective::kBcast, 65535, {2, 2});  // still the 4096 range
  EXPECT_EQ(c.algorithm, Algorithm::kVanDeGeijn);
  c = sel.choose(Collective::kBcast, 1u << 22, {2, 2});
  EXPECT_EQ(c.algorithm, Algorithm::kFarfirst);
  EXPECT_EQ(c.segment, 16384u);
  c = sel.choose(Collective::kAllreduce, 1u << 20, {2, 2});
  EXPECT_EQ(c.algorithm, Algorithm::kRabenseifner);
  EXPECT_EQ(c.inter_senders, 2);
  EXPECT_EQ(c.segment, 65536u);
  // Another layout keeps the built-in rules.
  c = sel.choose(Collective::kBcast, 100, {4, 4});
  EXPECT_EQ(c.algorithm, Algorithm::kFarfirst);
  EXPECT_EQ(c.segment, 0u);
  // Untouched collectives too.
  EXPECT_EQ(sel.choose(Collective::kReduce, 100, {2, 2}).algorithm, Algorithm::kLeaders);
}

}  // namespace
}  // namespace zipper::tune
