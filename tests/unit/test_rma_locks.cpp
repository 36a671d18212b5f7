// The passive-target lock table (client/rma_locks.h): exclusion, sharing,
// and FIFO grants across origins whatever their ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "client/rma_locks.h"

namespace {

using zipper::client::rma::LockTable;

TEST(RmaLockTable, ExclusiveExcludesEveryone) {
  LockTable t(4);
  EXPECT_TRUE(t.grant(2, true));
  EXPECT_FALSE(t.grant(0, true));
  EXPECT_FALSE(t.grant(1, false));
  EXPECT_TRUE(t.release(2));
  EXPECT_TRUE(t.grant(0, true));  // queued first
  EXPECT_FALSE(t.grant(1, false));
  EXPECT_TRUE(t.release(0));
  EXPECT_TRUE(t.grant(1, false));
  EXPECT_EQ(t.waiting(), 0u);
}

TEST(RmaLockTable, SharedHoldsTogetherAndReleaseCounts) {
  LockTable t(3);
  EXPECT_TRUE(t.grant(0, false));
  EXPECT_TRUE(t.grant(1, false));
  EXPECT_TRUE(t.grant(2, false));
  EXPECT_TRUE(t.release(1));
  EXPECT_FALSE(t.release(1));  // holds none now: MPI_ERR_RMA_SYNC at the target
  EXPECT_TRUE(t.release(0));
  EXPECT_TRUE(t.release(2));
  EXPECT_TRUE(t.grant(1, true));
}

TEST(RmaLockTable, ReleaseWithoutLockIsRefused) {
  LockTable t(2);
  EXPECT_FALSE(t.release(0));
  EXPECT_TRUE(t.grant(0, false));
  EXPECT_FALSE(t.release(1));
}

// Retries as the target makes them: after a release every waiting request
// is tried again, lowest origin rank first (the order of its queues). The
// grants must still follow arrival order.
std::vector<std::size_t> drain(LockTable& t, std::vector<std::pair<std::size_t, bool>>& waiting) {
  std::vector<std::size_t> granted;
  for (bool moved = true; moved;) {
    moved = false;
    std::sort(waiting.begin(), waiting.end());
    for (auto it = waiting.begin(); it != waiting.end();) {
      if (t.grant(it->first, it->second)) {
        granted.push_back(it->first);
        it = waiting.erase(it);
        moved = true;
      } else {
        ++it;
      }
    }
  }
  return granted;
}

TEST(RmaLockTable, ExclusiveGrantsFollowArrivalNotRank) {
  LockTable t(8);
  EXPECT_TRUE(t.grant(5, true));
  // Arrive in the order 7, 3, 6, 0 while 5 holds the lock.
  std::vector<std::pair<std::size_t, bool>> waiting;
  for (std::size_t o : {7u, 3u, 6u, 0u}) {
    EXPECT_FALSE(t.grant(o, true));
    waiting.emplace_back(o, true);
  }
  EXPECT_EQ(t.waiting(), 4u);
  std::vector<std::size_t> order;
  std::size_t holder = 5;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(t.release(holder));
    auto g = drain(t, waiting);
    ASSERT_EQ(g.size(), 1u);
    holder = g[0];
    order.push_back(holder);
  }
  EXPECT_EQ(order, (std::vector<std::size_t>{7, 3, 6, 0}));
  EXPECT_EQ(t.waiting(), 0u);
}

TEST(RmaLockTable, SharedStreamDoesNotStarveExclusive) {
  LockTable t(4);
  EXPECT_TRUE(t.grant(1, false));
  EXPECT_FALSE(t.grant(3, true));  // waits for 1's shared lock
  // A new shared request arriving after it waits too, although it is
  // compatible with the shared holder (and has a lower rank).
  EXPECT_FALSE(t.grant(0, false));
  EXPECT_FALSE(t.grant(2, false));
  std::vector<std::pair<std::size_t, bool>> waiting{{3, true}, {0, false}, {2, false}};
  EXPECT_TRUE(drain(t, waiting).empty());
  EXPECT_TRUE(t.release(1));
  EXPECT_EQ(drain(t, waiting), (std::vector<std::size_t>{3}));
  EXPECT_TRUE(t.release(3));
  // Both shared requests behind it are granted together.
  auto g = drain(t, waiting);
  std::sort(g.begin(), g.end());
  EXPECT_EQ(g, (std::vector<std::size_t>{0, 2}));
}

TEST(RmaLockTable, SharedBehindSharedIsGrantedInOnePass) {
  LockTable t(4);
  EXPECT_TRUE(t.grant(0, true));
  EXPECT_FALSE(t.grant(3, false));
  EXPECT_FALSE(t.grant(1, false));
  EXPECT_FALSE(t.grant(2, true));
  std::vector<std::pair<std::size_t, bool>> waiting{{3, false}, {1, false}, {2, true}};
  EXPECT_TRUE(t.release(0));
  auto g = drain(t, waiting);
  std::sort(g.begin(), g.end());
  EXPECT_EQ(g, (std::vector<std::size_t>{1, 3}));  // 2 (exclusive) still waits
  EXPECT_EQ(t.waiting(), 1u);
  EXPECT_TRUE(t.release(1));
  EXPECT_TRUE(drain(t, waiting).empty());
  EXPECT_TRUE(t.release(3));
  EXPECT_EQ(drain(t, waiting), (std::vector<std::size_t>{2}));
}

}  // namespace
