// The communication profile's counters (client/traffic_profile.h): both
// hooks' counts per destination, messages to oneself left out.
#include <gtest/gtest.h>

#include "client/traffic_profile.h"

namespace {

using zipper::client::TrafficProfile;

TEST(TrafficProfile, RowsSumBothHooksPerDestination) {
  TrafficProfile p(5, 2);
  EXPECT_TRUE(p.rows().empty());
  p.sent(4, 100);
  p.sent(0, 0);  // an empty message still pays a latency
  {
    const auto held = p.lock_native();
    p.sent_natively(4, 28);
    p.sent_natively(1, 7);
    p.sent_natively(2, 999);  // to itself: not traffic
  }
  p.sent(2, 999);  // likewise
  const auto rows = p.rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].dst, 0);
  EXPECT_EQ(rows[0].bytes, 0u);
  EXPECT_EQ(rows[0].messages, 1u);
  EXPECT_EQ(rows[1].dst, 1);
  EXPECT_EQ(rows[1].bytes, 7u);
  EXPECT_EQ(rows[1].messages, 1u);
  EXPECT_EQ(rows[2].dst, 4);
  EXPECT_EQ(rows[2].bytes, 128u);
  EXPECT_EQ(rows[2].messages, 2u);
}

}  // namespace
