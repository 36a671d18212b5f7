// zipper-loadgen's own checks and bookkeeping (bench/loadgen): the pair
// tables of every pattern, the payload check (each altered byte found),
// the send time in the header, the latency histogram against exact
// percentiles, and the option specs' refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "bench/loadgen/job_spec.h"
#include "bench/loadgen/latency_histogram.h"
#include "bench/loadgen/payload_check.h"
#include "bench/loadgen/traffic_pattern.h"

namespace zipper::loadgen {
namespace {

TEST(PairTable, EveryPairCrossesTheBridgeAndEverySourceIsIndexed) {
  for (Pattern p : {Pattern::kRing, Pattern::kNeighbours, Pattern::kIncast, Pattern::kAllToAll,
                    Pattern::kPingPong})
    for (auto [x, y] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
             {1, 1}, {4, 4}, {5, 3}, {3, 5}, {1, 7}, {16, 9}}) {
      SCOPED_TRACE(std::string(to_string(p)) + " " + std::to_string(x) + "+" + std::to_string(y));
      const PairTable t(p, x, y, 3);
      std::uint64_t dests = 0, srcs = 0;
      std::vector<std::set<std::uint32_t>> seen(x + y);  // sources each rank was given
      for (std::uint32_t r = 0; r < x + y; ++r) {
        std::set<std::uint32_t> mine;
        for (std::uint32_t i = 0; i < t.dest_count(r); ++i) {
          const std::uint32_t d = t.dest(r, i);
          ASSERT_LT(d, x + y);
          EXPECT_NE(t.low(r), t.low(d)) << "rank " << r << " -> " << d;
          EXPECT_TRUE(mine.insert(d).second) << "rank " << r << " sends to " << d << " twice";
          const auto idx = t.src_index(d, r);
          ASSERT_TRUE(idx.has_value()) << r << " -> " << d << " not among " << d << "'s sources";
          EXPECT_LT(*idx, t.src_count(d));
          EXPECT_TRUE(seen[d].insert(*idx).second) << "two sources share index " << *idx;
        }
        dests += t.dest_count(r);
        srcs += t.src_count(r);
        // A rank of its own group is never a source.
        for (std::uint32_t o = 0; o < x + y; ++o) {
          if (t.low(o) == t.low(r)) {
            EXPECT_FALSE(t.src_index(r, o).has_value());
          }
        }
      }
      EXPECT_EQ(pair_count(p, x, y, 3), t.pairs());
      EXPECT_EQ(dests, t.pairs());
      EXPECT_EQ(srcs, t.pairs());
      for (std::uint32_t r = 0; r < x + y; ++r) EXPECT_EQ(seen[r].size(), t.src_count(r));
    }
}

TEST(PairTable, PatternShapes) {
  EXPECT_EQ(PairTable(Pattern::kAllToAll, 5, 3, 0).pairs(), 30u);
  EXPECT_EQ(PairTable(Pattern::kRing, 4, 4, 0).pairs(), 8u);
  EXPECT_EQ(PairTable(Pattern::kNeighbours, 8, 8, 3).pairs(), 48u);
  EXPECT_EQ(PairTable(Pattern::kNeighbours, 8, 2, 3).dest_count(0), 2u);  // capped by y
  const PairTable in(Pattern::kIncast, 4, 6, 0);
  EXPECT_EQ(in.src_count(0), 6u);
  EXPECT_EQ(in.dest_count(0), 0u);
  const PairTable pp(Pattern::kPingPong, 3, 5, 0);
  EXPECT_EQ(pp.pairs(), 6u);  // min(x, y) pairs, both ways
  EXPECT_EQ(pp.dest(1, 0), 4u);
  EXPECT_EQ(pp.dest(4, 0), 1u);
  EXPECT_EQ(pp.dest_count(7), 0u);
}

TEST(PayloadCheck, EveryAlteredByteIsFound) {
  for (std::size_t n : {0u, 1u, 7u, 8u, 17u, 4096u}) {
    std::vector<std::byte> b(n);
    fill_payload(7, 3, 900, 42, b);
    EXPECT_EQ(check_payload(7, 3, 900, 42, b), n);
    for (std::size_t i = 0; i < n; i += (n > 64 ? 61 : 1)) {
      auto bad = b;
      bad[i] ^= std::byte{0x10};
      EXPECT_EQ(check_payload(7, 3, 900, 42, bad), i) << "size " << n;
    }
  }
}

TEST(PayloadCheck, AnotherMessagesPayloadFails) {
  std::vector<std::byte> b(8);
  fill_payload(7, 3, 900, 42, b);
  EXPECT_LT(check_payload(7, 3, 900, 43, b), 8u);  // next in sequence
  EXPECT_LT(check_payload(7, 4, 900, 42, b), 8u);  // other source
  EXPECT_LT(check_payload(7, 3, 901, 42, b), 8u);  // other destination
  EXPECT_LT(check_payload(8, 3, 900, 42, b), 8u);  // other job
}

TEST(PayloadCheck, SendTimeTravelsInTheHeader) {
  for (std::uint64_t t : {0ull, 1ull, 0xffffffffull, 0x1'0000'0000ull, ~0ull, 123456789012345ull}) {
    proto::FrameHeader h;
    stamp_send_time(h, t);
    EXPECT_EQ(send_time(h), t);
  }
}

TEST(LatencyHistogram, QuantilesWithinABucketOfExact) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d(10, 2);  // ns: around 22 us, wide tail
  std::vector<std::uint64_t> v;
  LatencyHistogram h, a, b;
  for (int i = 0; i < 100000; ++i) {
    const auto x = static_cast<std::uint64_t>(d(rng));
    v.push_back(x);
    h.add(x);
    (i % 2 ? a : b).add(x);
  }
  std::sort(v.begin(), v.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(v[static_cast<std::size_t>(q * v.size()) - 1]);
    EXPECT_NEAR(h.quantile(q), exact, exact * 0.033 + 1) << "q " << q;
  }
  EXPECT_EQ(h.max(), v.back());
  EXPECT_EQ(h.min(), v.front());
  a.merge(b);
  const auto round = LatencyHistogram::from_json(a.to_json());
  for (double q : {0.5, 0.99}) EXPECT_EQ(round.quantile(q), h.quantile(q));
  EXPECT_EQ(round.count(), h.count());
  auto j = h.to_json();
  j["count"] = h.count() + 1;
  EXPECT_THROW(LatencyHistogram::from_json(j), std::invalid_argument);
}

TEST(JobSpec, ParsesAndRefusesClearly) {
  const JobSpec j = parse_job_spec("count=3,layout=100+28,pattern=alltoall,size=0,rate=2.5", "n");
  EXPECT_EQ(j.count, 3u);
  EXPECT_EQ(j.layout.x, 100u);
  EXPECT_EQ(j.layout.y, 28u);
  EXPECT_EQ(j.pattern, Pattern::kAllToAll);
  EXPECT_EQ(j.size, 0u);
  EXPECT_DOUBLE_EQ(j.rate, 2.5);
  EXPECT_EQ(j.name, "n");
  EXPECT_DOUBLE_EQ(parse_churn_spec("vanish=25%").vanish, 0.25);
  for (const char* bad : {"layout=0+4", "layout=4", "pattern=star", "bogus=1", "count=1,count=2",
                          "size=-1", "size=2097152", "messages=0", "count", "rate=x"})
    EXPECT_THROW(parse_job_spec(bad, "n"), std::invalid_argument) << bad;
  EXPECT_THROW(parse_churn_spec("vanish=150%"), std::invalid_argument);
}

}  // namespace
}  // namespace zipper::loadgen
