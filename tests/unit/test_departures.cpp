// Departures and floods off the relay path, the pure parts: the reaper
// thread that finishes closes and job-wide notices (order, delays,
// nothing lost at stop), each tenant's PING share (answers put off, then
// dropped), and which admission --auth auto picks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "forwarder/auth_mode.h"
#include "forwarder/reaper.h"
#include "forwarder/tenant_ping_share.h"

namespace fw = zipper::forwarder;
using namespace std::chrono_literals;

TEST(Reaper, RunsTasksInOrderOffTheCallersThread) {
  fw::Reaper r;
  r.start();
  std::mutex mu;
  std::vector<int> seen;
  std::atomic<bool> other_thread{true};
  const auto me = std::this_thread::get_id();
  for (int i = 0; i < 1000; ++i)
    r.post([&, i] {
      if (std::this_thread::get_id() == me) other_thread = false;
      std::lock_guard lk(mu);
      seen.push_back(i);
    });
  r.stop();
  ASSERT_EQ(seen.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_TRUE(other_thread);
  EXPECT_EQ(r.done(), 1000u);
  EXPECT_EQ(r.backlog(), 0u);
}

TEST(Reaper, DelayedTasksWaitTheirTimeAndStopRunsThemAtOnce) {
  fw::Reaper r;
  r.start();
  std::atomic<int> ran{0};
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<std::int64_t> waited_ms{-1};
  r.post_after(60ms, [&] {
    waited_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    ++ran;
  });
  r.post([&] { ++ran; });  // not behind the delayed one
  for (int i = 0; i < 200 && ran < 1; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_GE(ran.load(), 1);
  for (int i = 0; i < 2000 && ran < 2; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(ran.load(), 2);
  EXPECT_GE(waited_ms.load(), 60);
  // One an hour away: stop() runs it rather than lose it.
  bool late = false;
  r.post_after(1h, [&] { late = true; });
  EXPECT_EQ(r.backlog(), 1u);
  r.stop();
  EXPECT_TRUE(late);
  // After stop (and before start) a task runs on the caller's thread.
  bool inline_ran = false;
  r.post([&] { inline_ran = true; });
  EXPECT_TRUE(inline_ran);
}

TEST(Reaper, ATaskMayPostMore) {
  fw::Reaper r;
  r.start();
  std::atomic<int> n{0};
  r.post([&] {
    ++n;
    r.post_after(5ms, [&] {
      ++n;
      r.post([&] { ++n; });
    });
  });
  for (int i = 0; i < 2000 && n < 3; ++i) std::this_thread::sleep_for(1ms);
  r.stop();
  EXPECT_EQ(n.load(), 3);
}

// A tenant gets `burst` answers at once, then one per 1/rate; over that,
// answers are put off (each to its own later slot, never two to one) up to
// max_wait, then PINGs are dropped without charge. Tenants do not share.
TEST(TenantPingShares, BurstThenDeferredThenDropped) {
  using Clock = fw::TenantPingShares::Clock;
  fw::TenantPingShares s(1000, 4, 10ms);  // one per ms, 4 back to back, 10 ms of deferral
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s.reserve("prefix a", t0), t0) << i;
  // Over the burst: put off, one ms apart.
  std::vector<Clock::time_point> due;
  for (int i = 0; i < 10; ++i) {
    auto d = s.reserve("prefix a", t0);
    ASSERT_TRUE(d) << i;
    due.push_back(*d);
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(due[i], t0 + std::chrono::milliseconds(i + 1)) << i;
  // The next would wait 11 ms > 10 ms: dropped, and charged nothing.
  EXPECT_FALSE(s.reserve("prefix a", t0));
  EXPECT_FALSE(s.reserve("prefix a", t0));
  EXPECT_EQ(s.reserve("prefix a", t0 + 1ms), t0 + 11ms);
  // Another tenant is untouched.
  EXPECT_EQ(s.reserve("uid 1000", t0), t0);
  // A flood at 100x the rate for a second gets burst + rate + the deferral's worth.
  fw::TenantPingShares f(1000, 4, 10ms);
  int answered = 0;
  for (int us = 0; us < 1'000'000; us += 10)
    answered += f.reserve("prefix b", t0 + std::chrono::microseconds(us)).has_value();
  EXPECT_LE(answered, 4 + 1000 + 11);
  EXPECT_GE(answered, 1000);
  // Quiet tenants leave the table.
  EXPECT_EQ(s.tenants(), 2u);
  s.prune(t0 + 1s);
  EXPECT_EQ(s.tenants(), 0u);
  // Rate 0: no share.
  fw::TenantPingShares none(0, 1, 0ms);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(none.reserve("x", t0), t0);
}

// --auth auto: MUNGE only where every listener's munged answers; explicit
// settings are kept whatever the probes say.
TEST(AuthMode, AutoPicksMungeOnlyWhereEveryListenerHasIt) {
  const fw::MungeProbe ok{true, ""}, absent{false, "no munged socket at /run/munge/munge.socket.2"};
  EXPECT_EQ(fw::resolve_auth("auto", {ok, ok}), "munge");
  EXPECT_EQ(fw::resolve_auth("auto", {ok}), "munge");
  EXPECT_EQ(fw::resolve_auth("auto", {ok, absent}), "secret");
  EXPECT_EQ(fw::resolve_auth("auto", {absent, absent}), "secret");
  EXPECT_EQ(fw::resolve_auth("auto", {}), "secret");
  EXPECT_EQ(fw::resolve_auth("secret", {ok, ok}), "secret");
  EXPECT_EQ(fw::resolve_auth("munge", {absent}), "munge");  // refuses ranks later, loudly
}

// The probe itself: a socket path that does not exist is found at once
// (no libmunge retries), with its path in the reason.
TEST(AuthMode, ProbeOfAMissingSocketIsQuickAndSaysWhy) {
  const auto t0 = std::chrono::steady_clock::now();
  const fw::MungeProbe p = fw::probe_munge("/nonexistent/zipper-test/munge.socket");
  EXPECT_FALSE(p.usable);
  EXPECT_NE(p.why.find("/nonexistent/zipper-test/munge.socket"), std::string::npos) << p.why;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}
