// zipperd flow control: per-connection credit and the global memory budget.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "forwarder/credit_account.h"
#include "forwarder/memory_budget.h"

namespace {

using zipper::forwarder::CreditAccount;
using zipper::forwarder::MemoryBudget;

TEST(CreditAccount, StartsEmpty) {
  CreditAccount c(1000);
  EXPECT_EQ(c.granted(), 1000u);
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_EQ(c.returnable(), 0u);
  EXPECT_EQ(c.take_returnable(), 0u);
}

TEST(CreditAccount, ChargeUpToTheGrant) {
  CreditAccount c(1000);
  EXPECT_TRUE(c.charge(400));
  EXPECT_TRUE(c.charge(600));  // exactly the grant is allowed
  EXPECT_EQ(c.in_use(), 1000u);
  EXPECT_EQ(c.returnable(), 0u);
}

TEST(CreditAccount, Overrun) {
  CreditAccount c(1000);
  EXPECT_TRUE(c.charge(999));
  EXPECT_FALSE(c.charge(2));
  // The failed charge is still counted (the caller releases it).
  EXPECT_EQ(c.in_use(), 1001u);
  CreditAccount d(100);
  EXPECT_FALSE(d.charge(101));
}

TEST(CreditAccount, ReleaseMakesCreditReturnable) {
  CreditAccount c(1000);
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

TEST(CreditAccount, ReleasedCreditCanBeChargedAgain) {
  CreditAccount c(1000);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(c.charge(1000)) << i;
    c.release(1000);
  }
  EXPECT_EQ(c.in_use(), 0u);
  EXPECT_EQ(c.take_returnable(), 100000u);
}

TEST(CreditAccount, ConcurrentChargeAndRelease) {
  CreditAccount c(1u << 30);
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

TEST(MemoryBudget, TryAcquireRespectsLimit) {
  MemoryBudget b(1000);
  EXPECT_EQ(b.limit(), 1000u);
  EXPECT_TRUE(b.try_acquire(600));
  EXPECT_FALSE(b.try_acquire(401));
  EXPECT_EQ(b.used(), 600u);  // a refused acquire takes nothing
  EXPECT_TRUE(b.try_acquire(400));
  EXPECT_EQ(b.used(), 1000u);
  EXPECT_FALSE(b.try_acquire(1));
  EXPECT_TRUE(b.try_acquire(0));
  b.release(1000);
  EXPECT_EQ(b.used(), 0u);
  EXPECT_FALSE(b.try_acquire(1001));
}

TEST(MemoryBudget, PeakTracksHighWaterMark) {
  MemoryBudget b(1000);
  EXPECT_EQ(b.peak(), 0u);
  ASSERT_TRUE(b.try_acquire(300));
  ASSERT_TRUE(b.try_acquire(400));
  EXPECT_EQ(b.peak(), 700u);
  b.release(400);
  EXPECT_EQ(b.peak(), 700u);
  ASSERT_TRUE(b.try_acquire(100));
  EXPECT_EQ(b.peak(), 700u);
  ASSERT_TRUE(b.try_acquire(500));
  EXPECT_EQ(b.peak(), 900u);
  EXPECT_FALSE(b.try_acquire(200));
  EXPECT_EQ(b.peak(), 900u);  // refused acquires do not raise the peak
}

TEST(MemoryBudget, ReleaseRunsHook) {
  MemoryBudget b(1000);
  b.release(0);  // no hook set: fine
  int calls = 0;
  std::uint64_t used_seen = 12345;
  b.set_on_release([&] {
    ++calls;
    used_seen = b.used();
  });
  ASSERT_TRUE(b.try_acquire(500));
  EXPECT_EQ(calls, 0);
  b.release(200);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(used_seen, 300u);  // the hook runs after the bytes are back
  b.release(300);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(used_seen, 0u);
}

TEST(MemoryBudget, ConcurrentAcquireReleaseNeverExceedsLimit) {
  constexpr std::uint64_t kLimit = 10000;
  MemoryBudget b(kLimit);
  std::atomic<std::uint64_t> held{0}, max_held{0}, releases{0};
  b.set_on_release([&] { releases.fetch_add(1, std::memory_order_relaxed); });
  auto worker = [&](unsigned seed) {
    std::uint64_t x = seed;
    std::vector<std::uint64_t> mine;
    for (int i = 0; i < 50000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const std::uint64_t n = 1 + (x >> 33) % 3000;
      if (b.try_acquire(n)) {
        const std::uint64_t h = held.fetch_add(n) + n;
        std::uint64_t m = max_held.load();
        while (h > m && !max_held.compare_exchange_weak(m, h)) {
        }
        ASSERT_LE(b.used(), kLimit);
        mine.push_back(n);
      }
      if (!mine.empty() && ((x >> 20) & 1)) {
        held.fetch_sub(mine.back());
        b.release(mine.back());
        mine.pop_back();
      }
    }
    for (auto n : mine) {
      held.fetch_sub(n);
      b.release(n);
    }
  };
  std::thread t1(worker, 1u), t2(worker, 2u);
  t1.join();
  t2.join();
  EXPECT_EQ(b.used(), 0u);
  EXPECT_EQ(held.load(), 0u);
  EXPECT_LE(max_held.load(), kLimit);
  EXPECT_LE(b.peak(), kLimit);
  EXPECT_GT(b.peak(), 0u);
  EXPECT_GT(releases.load(), 0u);
}

}  // namespace
