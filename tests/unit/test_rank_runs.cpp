// Runs of consecutive ranks per cluster (collectives/rank_runs.h), which
// decide the combining order of scans and non-commutative reductions.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/rank_runs.h"

namespace zipper::coll {
namespace {

std::vector<Run> runs_of(const std::vector<int>& cluster_of_rank, int mine) {
  return rank_runs(static_cast<int>(cluster_of_rank.size()),
                   [&](int r) { return cluster_of_rank[r] == mine; });
}

TEST(RankRuns, ContiguousClustersGiveOneRunEach) {
  const auto low = runs_of({0, 0, 0, 1, 1, 1, 1, 1}, 0);
  ASSERT_EQ(low.size(), 2u);
  EXPECT_EQ(low[0].first, 0);
  EXPECT_EQ(low[0].last, 2);
  EXPECT_TRUE(low[0].local);
  EXPECT_EQ(low[1].first, 3);
  EXPECT_EQ(low[1].last, 7);
  EXPECT_FALSE(low[1].local);
  // Seen from the other cluster: the same runs, locality flipped.
  const auto high = runs_of({0, 0, 0, 1, 1, 1, 1, 1}, 1);
  ASSERT_EQ(high.size(), 2u);
  EXPECT_FALSE(high[0].local);
  EXPECT_TRUE(high[1].local);
  EXPECT_EQ(count_runs(high, true), 1);
  EXPECT_EQ(count_runs(high, false), 1);
}

TEST(RankRuns, InterleavedClustersAlternate) {
  // A Comm_split with keys reversed on one cluster, for example.
  const auto r = runs_of({1, 0, 0, 1, 0, 1, 1}, 0);
  const std::vector<std::pair<int, int>> want = {{0, 0}, {1, 2}, {3, 3}, {4, 4}, {5, 6}};
  ASSERT_EQ(r.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r[i].first, want[i].first) << i;
    EXPECT_EQ(r[i].last, want[i].second) << i;
    EXPECT_EQ(r[i].local, i % 2 == 1) << i;
    if (i > 0) {
      EXPECT_NE(r[i].local, r[i - 1].local) << "adjacent runs must alternate";
    }
  }
  EXPECT_EQ(count_runs(r, true), 2);
  EXPECT_EQ(count_runs(r, false), 3);
}

TEST(RankRuns, SingleClusterAndSingleRank) {
  const auto r = runs_of({0, 0, 0, 0}, 0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].first, 0);
  EXPECT_EQ(r[0].last, 3);
  EXPECT_TRUE(r[0].local);
  const auto one = runs_of({0}, 0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].last, 0);
  EXPECT_TRUE(runs_of({}, 0).empty());
}

TEST(RankRuns, RunsCoverEveryRankOnceInOrder) {
  // Every 10-rank two-cluster assignment: runs tile 0..9 with no gap.
  for (int mask = 0; mask < (1 << 10); ++mask) {
    std::vector<int> cl(10);
    for (int r = 0; r < 10; ++r) cl[r] = (mask >> r) & 1;
    const auto runs = runs_of(cl, 1);
    int next = 0;
    for (const coll::Run& run : runs) {
      ASSERT_EQ(run.first, next) << mask;
      ASSERT_LE(run.first, run.last);
      for (int r = run.first; r <= run.last; ++r) ASSERT_EQ(cl[r] == 1, run.local) << mask;
      next = run.last + 1;
    }
    ASSERT_EQ(next, 10) << mask;
  }
}

}  // namespace
}  // namespace zipper::coll
