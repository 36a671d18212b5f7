// zipperd flow control: per-connection credit (test_buffer_pool.cpp: the pools).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "forwarder/frame_credits.h"

namespace {

using zipper::forwarder::FrameCredits;

TEST(FrameCredits, StartsEmpty) {
  FrameCredits c(1000);
  EXPECT_EQ(c.granted(), 1000u);
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_EQ(c.returnable(), 0u);
  EXPECT_EQ(c.take_returnable(), 0u);
}

TEST(FrameCredits, ChargeUpToTheGrant) {
  FrameCredits c(1000);
  EXPECT_TRUE(c.charge(400));
  EXPECT_TRUE(c.charge(600));  // exactly the grant is allowed
  EXPECT_EQ(c.in_use(), 1000u);
  EXPECT_EQ(c.returnable(), 0u);
}

TEST(FrameCredits, Overrun) {
  FrameCredits c(1000);
  EXPECT_TRUE(c.charge(999));
  EXPECT_FALSE(c.charge(2));
  // The failed charge is still counted (the caller releases it).
  EXPECT_EQ(c.in_use(), 1001u);
  FrameCredits d(100);
  EXPECT_FALSE(d.charge(101));
}

TEST(FrameCredits, ReleaseMakesCreditReturnable) {
  FrameCredits c(1000);
  ASSERT_TRUE(c.charge(300));
  ASSERT_TRUE(c.charge(200));
  c.release(300);
  EXPECT_EQ(c.in_use(), 200u);
  EXPECT_EQ(c.returnable(), 300u);
  c.release(200);
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_EQ(c.returnable(), 500u);
  EXPECT_EQ(c.take_returnable(), 500u);
  EXPECT_EQ(c.returnable(), 0u);
  EXPECT_EQ(c.take_returnable(), 0u);  // taken once only
}

TEST(FrameCredits, ReleasedCreditCanBeChargedAgain) {
  FrameCredits c(1000);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(c.charge(1000)) << i;
    c.release(1000);
  }
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_EQ(c.take_returnable(), 100000u);
}

TEST(FrameCredits, ConcurrentChargeAndRelease) {
  FrameCredits c(1u << 30);
  constexpr int kIters = 20000;
  std::thread t([&] {
    for (int i = 0; i < kIters; ++i) {
      ASSERT_TRUE(c.charge(64));
      c.release(64);
    }
  });
  std::uint64_t taken = 0;
  for (int i = 0; i < kIters; ++i) {
    ASSERT_TRUE(c.charge(128));
    c.release(128);
    taken += c.take_returnable();
  }
  t.join();
  taken += c.take_returnable();
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_EQ(taken, std::uint64_t{kIters} * (64 + 128));
}

}  // namespace
