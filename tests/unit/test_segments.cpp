// The segment layouts of the collectives with n inter-cluster senders.
#include <gtest/gtest.h>

#include <numeric>

#include "collectives/segments.h"

namespace {

using zipper::coll::GroupedSegments;

TEST(GroupedSegments, PiecesTileTheVectorInRankOrderAndRefineTheSegments) {
  for (int count : {0, 1, 7, 64, 1000, 262144 + 3}) {
    for (int p = 1; p <= 9; ++p) {
      for (int n = 1; n <= p; ++n) {
        SCOPED_TRACE(std::to_string(count) + " " + std::to_string(p) + " " + std::to_string(n));
        const GroupedSegments g(count, n, p);
        // Pieces tile [0, count) in rank order.
        int at = 0;
        for (int i = 0; i < p; ++i) {
          ASSERT_EQ(g.displs[i], at);
          at += g.counts[i];
        }
        ASSERT_EQ(at, count);
        // Segments are near-equal, identical for any cluster size.
        const GroupedSegments other(count, n, 9);
        ASSERT_EQ(g.seg_counts, other.seg_counts);
        for (int j = 0; j < n; ++j) ASSERT_LE(g.seg_counts[0] - g.seg_counts[j], 1);
        // Group j = consecutive ranks from its leader; their pieces make up S_j.
        for (int j = 0; j < n; ++j) {
          const int first = g.leader(j, p), end = g.leader(j + 1, p);
          ASSERT_LT(first, end) << "empty group";
          ASSERT_EQ(g.displs[first], g.seg_displs[j]);
          int sum = 0;
          for (int i = first; i < end; ++i) {
            ASSERT_EQ(g.group_of(i), j);
            sum += g.counts[i];
          }
          ASSERT_EQ(sum, g.seg_counts[j]);
        }
      }
    }
  }
}

TEST(GroupedSegments, HandComputedLayout) {
  // 10 elements, n = 2, 5 ranks: S_0 = [0,5) on ranks 0-2, S_1 = [5,10) on 3-4.
  const GroupedSegments g(10, 2, 5);
  EXPECT_EQ(g.seg_counts, (std::vector<int>{5, 5}));
  EXPECT_EQ(g.counts, (std::vector<int>{2, 2, 1, 3, 2}));
  EXPECT_EQ(g.displs, (std::vector<int>{0, 2, 4, 5, 8}));
  EXPECT_EQ(g.leader(0, 5), 0);
  EXPECT_EQ(g.leader(1, 5), 3);
  EXPECT_EQ(g.leader(1, 3), 2);  // the far cluster of 3 ranks: its leader of S_1
}

}  // namespace
