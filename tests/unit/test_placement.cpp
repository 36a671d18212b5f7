// The placement partitioner (place/placement.h) against brute force, on
// known patterns and random graphs; the matrix and rank-map file formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "place/comm_matrix.h"
#include "place/placement.h"
#include "place/rank_map_file.h"

namespace zipper::place {
namespace {

// Every assignment of the machine's sizes, the least modelled time.
double brute_force(const Machine& m, const std::vector<Traffic>& traffic) {
  std::vector<int> order = m.block_order();  // sorted: next_permutation visits each once
  double best = std::numeric_limits<double>::infinity();
  do {
    best = std::min(best, evaluate(m, traffic, order).time_us);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::vector<Traffic> ring(int n, std::uint64_t bytes) {
  std::vector<Traffic> t;
  for (int r = 0; r < n; ++r) t.push_back({r, (r + 1) % n, bytes, 1});
  return t;
}

// 5-point halo on a rows × cols grid numbered row-major, both directions.
std::vector<Traffic> halo(int rows, int cols, std::uint64_t bytes) {
  std::vector<Traffic> t;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const int r = i * cols + j;
      if (j + 1 < cols) t.push_back({r, r + 1, bytes, 1}), t.push_back({r + 1, r, bytes, 1});
      if (i + 1 < rows) t.push_back({r, r + cols, bytes, 1}), t.push_back({r + cols, r, bytes, 1});
    }
  return t;
}

std::vector<Traffic> random_traffic(std::mt19937& rng, int n, double density) {
  std::uniform_real_distribution<double> p(0, 1);
  std::uniform_int_distribution<std::uint64_t> bytes(1, 1 << 20), msgs(1, 100);
  std::vector<Traffic> t;
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (u != v && p(rng) < density) t.push_back({u, v, bytes(rng), msgs(rng)});
  return t;
}

constexpr LinkCost kLink{5.0, 0.001};  // 5 µs, 1 GB/s

TEST(Placement, MachineRefusesBadInput) {
  EXPECT_THROW(Machine({}, kLink), std::invalid_argument);
  EXPECT_THROW(Machine({4, 0}, kLink), std::invalid_argument);
  EXPECT_THROW(Machine({2, 2}, LinkCost{-1, 0}), std::invalid_argument);
  EXPECT_THROW(Machine({2, 2}, LinkCost{std::nan(""), 0}), std::invalid_argument);
  Machine m({2, 2, 2}, kLink);
  EXPECT_THROW(m.set_link(0, 0, kLink), std::invalid_argument);
  EXPECT_THROW(m.set_link(0, 3, kLink), std::invalid_argument);
  EXPECT_THROW(place(m, {{0, 6, 1, 1}}), std::invalid_argument);
  EXPECT_THROW(evaluate(m, {}, {0, 1}), std::invalid_argument);
}

TEST(Placement, EvaluateCountsOnlyCrossingTraffic) {
  Machine m({2, 2}, {10, 0.5});
  const std::vector<Traffic> t{{0, 1, 100, 2}, {1, 2, 40, 1}, {3, 0, 8, 4}, {2, 3, 1000, 9}};
  const Figures f = evaluate(m, t, m.block_order());
  EXPECT_EQ(f.crossing_bytes, 48u);
  EXPECT_EQ(f.crossing_messages, 5u);
  EXPECT_DOUBLE_EQ(f.time_us, 1 * 10 + 40 * 0.5 + 4 * 10 + 8 * 0.5);
}

TEST(Placement, HaloNumberedAcrossTheCutIsPlacedAlongIt) {
  // 2 rows × 8 columns, row-major: block order 8 + 8 cuts all 8 columns;
  // the best cut is between columns 3 and 4 (2 edges), a quarter.
  Machine m({8, 8}, kLink);
  const auto t = halo(2, 8, 65536);
  for (std::int64_t limit : {std::int64_t{200000}, std::int64_t{0}}) {  // exhaustive, METIS
    PlaceOptions opt;
    opt.exhaustive_limit = limit;
    const Placement p = place(m, t, opt);
    EXPECT_EQ(p.block.crossing_bytes, 16u * 65536);
    EXPECT_EQ(p.placed.crossing_bytes, 4u * 65536) << p.method;
    EXPECT_EQ(std::count(p.site_of.begin(), p.site_of.end(), 0), 8);
  }
}

TEST(Placement, RingAlreadyBestStaysInBlockOrder) {
  Machine m({4, 4}, kLink);
  const Placement p = place(m, ring(8, 1000));
  EXPECT_EQ(p.site_of, m.block_order());
  EXPECT_EQ(p.method, "start");
  EXPECT_EQ(p.placed.crossing_bytes, 2000u);
}

TEST(Placement, EqualsBruteForceOnRandomGraphs) {
  std::mt19937 rng(7);
  const std::vector<std::vector<int>> shapes{{3, 3},    {2, 5},    {4, 4},
                                             {2, 2, 2}, {3, 2, 3}, {1, 3, 2}};
  for (const auto& sizes : shapes)
    for (int trial = 0; trial < 4; ++trial) {
      Machine m(sizes, kLink);
      if (sizes.size() == 3) m.set_link(0, 2, {50, 0.01});  // a slow pair
      int n = 0;
      for (int s : sizes) n += s;
      const auto t = random_traffic(rng, n, 0.4);
      const Placement p = place(m, t);
      EXPECT_NEAR(p.placed.time_us, brute_force(m, t), 1e-6 * (1 + p.placed.time_us));
      EXPECT_LE(p.placed.time_us, p.block.time_us);
      PlaceOptions metis;
      metis.exhaustive_limit = 0;
      EXPECT_LE(place(m, t, metis).placed.time_us, p.block.time_us);
    }
}

TEST(Placement, UnequalLinksKeepHeavyPairsOnTheCheapLink) {
  // Ranks 0-1 and 2-3 talk heavily; sites A, B, C of 2 ranks; A-C is slow.
  // Block order puts the pairs inside sites (nothing crosses) but the
  // profile is numbered so that block order splits each pair.
  Machine m({2, 2, 2}, kLink);
  m.set_link(0, 2, {500, 1.0});
  const std::vector<Traffic> t{{1, 2, 1 << 20, 10}, {3, 4, 1 << 20, 10}, {0, 5, 10, 1}};
  const Placement p = place(m, t);
  EXPECT_EQ(p.site_of[1], p.site_of[2]);
  EXPECT_EQ(p.site_of[3], p.site_of[4]);
  EXPECT_NEAR(p.placed.time_us, brute_force(m, t), 1e-9);
}

TEST(Placement, LargeHaloThroughMetisNeverWorseThanBlock) {
  // 32 × 32 grid numbered column-major in row-major clothing: block order
  // 512 + 512 cuts along the long side.
  Machine m({512, 512}, kLink);
  std::vector<Traffic> t;
  for (const Traffic& e : halo(32, 32, 4096)) {
    auto cm = [](int r) { return (r % 32) * 32 + r / 32; };  // transpose the numbering
    t.push_back({cm(e.src), cm(e.dst), e.bytes, e.messages});
  }
  const Placement p = place(m, t);
  EXPECT_LE(p.placed.time_us, p.block.time_us);
  EXPECT_EQ(std::count(p.site_of.begin(), p.site_of.end(), 1), 512);
  // The least cut of a 32 × 32 grid into halves is 32 edges.
  EXPECT_LE(p.placed.crossing_bytes, p.block.crossing_bytes);
  EXPECT_GE(p.placed.crossing_bytes, 2u * 32 * 4096);
}

TEST(CommMatrixFile, RoundTripAndRefusals) {
  CommMatrix m{{"A", "B"}, {2, 1}, {0, 1, 0}, {{0, 2, 100, 3}, {2, 1, 5, 1}}};
  const auto j = comm_matrix_json(m);
  const CommMatrix back = comm_matrix_from_json(j);
  EXPECT_EQ(back.site_names, m.site_names);
  EXPECT_EQ(back.site_ranks, m.site_ranks);
  EXPECT_EQ(back.site_of, m.site_of);
  ASSERT_EQ(back.traffic.size(), 2u);
  EXPECT_EQ(back.traffic[0].bytes, 100u);
  EXPECT_EQ(back.traffic[1].messages, 1u);

  auto refused = [&](auto edit) {
    nlohmann::json k = j;
    edit(k);
    EXPECT_THROW(comm_matrix_from_json(k), std::runtime_error) << k.dump();
  };
  refused([](auto& k) { k["format"] = "other"; });
  refused([](auto& k) { k["version"] = 2; });
  refused([](auto& k) { k.erase("traffic"); });
  refused([](auto& k) { k["sites"][1]["ranks"] = 0; });
  refused([](auto& k) { k["site_of"] = {0, 0, 0}; });
  refused([](auto& k) { k["site_of"] = {0, 1}; });
  refused([](auto& k) { k["traffic"].push_back({0, 3, 1, 1}); });
  refused([](auto& k) { k["traffic"].push_back({0, 1, 1}); });
  refused([](auto& k) { k["traffic"].push_back({0, 1, -1, 1}); });
}

// The streamed writer (libmmpi's MMPI_Finalize) writes what the reader reads.
TEST(CommMatrixFile, StreamedWriterReadsBack) {
  const std::uint64_t big = UINT64_MAX;
  const CommMatrix m{{"A", "B \"q\" \\ \n"},
                     {2, 2},
                     {1, 0, 0, 1},
                     {{0, 3, 0, 1}, {3, 0, big, big}, {1, 2, 4096, 4}}};
  for (const CommMatrix& c : {m, CommMatrix{{"A"}, {1}, {0}, {}}}) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(write_comm_matrix(f, c));
    std::rewind(f);
    std::string text;
    for (int ch; (ch = std::fgetc(f)) != EOF;) text += static_cast<char>(ch);
    std::fclose(f);
    const CommMatrix back = comm_matrix_from_json(nlohmann::json::parse(text));
    EXPECT_EQ(back.site_names, c.site_names) << text;
    EXPECT_EQ(back.site_ranks, c.site_ranks);
    EXPECT_EQ(back.site_of, c.site_of);
    ASSERT_EQ(back.traffic.size(), c.traffic.size()) << text;
    for (std::size_t i = 0; i < c.traffic.size(); ++i) {
      EXPECT_EQ(back.traffic[i].src, c.traffic[i].src);
      EXPECT_EQ(back.traffic[i].dst, c.traffic[i].dst);
      EXPECT_EQ(back.traffic[i].bytes, c.traffic[i].bytes);
      EXPECT_EQ(back.traffic[i].messages, c.traffic[i].messages);
    }
  }
}

TEST(RankMapFile, RoundTripAndRefusals) {
  const std::vector<std::string> names{"A", "B"};
  const std::vector<int> site_of{1, 0, 0, 1};
  const auto j = rank_map_json(names, site_of);
  EXPECT_EQ(j["sites"][0]["ranks"], nlohmann::json({1, 2}));
  EXPECT_EQ(rank_map_from_json(j, names), site_of);
  EXPECT_THROW(rank_map_json(names, {0, 2}), std::invalid_argument);
  EXPECT_THROW(rank_map_from_json(j, {"A", "C"}), std::runtime_error);
  nlohmann::json twice = j;
  twice["sites"][1]["ranks"] = {0, 0};
  EXPECT_THROW(rank_map_from_json(twice, names), std::runtime_error);
  nlohmann::json far = j;
  far["sites"][1]["ranks"] = {0, 9};
  EXPECT_THROW(rank_map_from_json(far, names), std::runtime_error);
}

}  // namespace
}  // namespace zipper::place
