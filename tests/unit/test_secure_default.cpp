// Secure defaults, the pure logic: the control-frame budget per receive round, address
// prefixes for --max-jobs-per-prefix, which idle job the registry evicts
// first, and the control socket's directory check.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "forwarder/address_prefix.h"
#include "forwarder/control_budget.h"
#include "forwarder/job_registry.h"
#include "forwarder/ping_share.h"
#include "forwarder/request_server.h"
#include "test_util.h"

namespace fw = zipper::forwarder;
using namespace std::chrono_literals;

TEST(ControlBudget, FramesWithoutPayloadGetAShareOfEachRound) {
  fw::ControlBudget b(3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.charge(7, 0));
  EXPECT_FALSE(b.charge(7, 0));                    // spent for round 7
  EXPECT_FALSE(b.charge(7, 0));                    // and stays spent
  EXPECT_TRUE(b.charge(7, 4096));                  // data frames are bounded by credit, not by this
  EXPECT_TRUE(b.charge(8, 0));                     // a new round, a new share
  EXPECT_TRUE(fw::ControlBudget(0).charge(1, 0));  // at least one per round
}

// The PING share is a token bucket (GCRA): `burst` back to back, then one
// per 1/rate, and a refused PING charges nothing.
TEST(PingShare, BurstThenRateAndRefusalsAreFree) {
  using Clock = fw::PingShare::Clock;
  fw::PingShare s(100, 4);  // one per 10 ms, 4 back to back
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(s.take(t0)) << i;
  EXPECT_FALSE(s.take(t0));
  EXPECT_FALSE(s.take(t0 + 9ms));  // refusals do not push the next token later
  EXPECT_EQ(s.next_token(), t0 + 10ms);
  EXPECT_TRUE(s.take(t0 + 10ms));
  EXPECT_FALSE(s.take(t0 + 10ms));
  // A sender at 10x the rate for one second gets burst + rate of them.
  fw::PingShare f(100, 4);
  int taken = 0;
  for (int us = 0; us < 1'000'000; us += 1000) taken += f.take(t0 + std::chrono::microseconds(us));
  EXPECT_EQ(taken, 4 + 99);
  // After a quiet second the burst is back, but no more than the burst.
  int again = 0;
  for (int i = 0; i < 10; ++i) again += f.take(t0 + 2s);
  EXPECT_EQ(again, 4);
  // Rate 0: no share.
  fw::PingShare none(0, 1);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(none.take(t0));
}

TEST(AddressPrefix, GroupsBySubnet) {
  EXPECT_EQ(fw::address_prefix("127.0.0.2:4711", 24, 64), "127.0.0.0/24");
  EXPECT_EQ(fw::address_prefix("127.0.0.5:1", 24, 64), "127.0.0.0/24");
  EXPECT_EQ(fw::address_prefix("tcp:127.0.0.5:1", 24, 64), "127.0.0.0/24");  // Link::peer()
  EXPECT_EQ(fw::address_prefix("10.1.2.3", 16, 64), "10.1.0.0/16");
  EXPECT_EQ(fw::address_prefix("10.1.2.3:9", 32, 64), "10.1.2.3/32");
  EXPECT_EQ(fw::address_prefix("10.1.2.3:9", 20, 64), "10.1.0.0/20");
  EXPECT_EQ(fw::address_prefix("[fd00:1:2:3:4:5:6:7]:7470", 24, 64), "fd00:1:2:3::/64");
  EXPECT_EQ(fw::address_prefix("::1", 24, 128), "::1/128");
  EXPECT_EQ(fw::address_prefix("mlx5_0:1", 24, 64), "");  // not an IP address
}

namespace {
std::shared_ptr<fw::Connection> conn(std::uint64_t id) {
  return std::make_shared<fw::Connection>(id, 0, nullptr, 4);
}
fw::JobRegistry::JoinRequest req(std::uint64_t job, std::uint32_t rank, const std::string& owner,
                                 const std::string& prefix) {
  namespace auth = zipper::proto::auth;
  fw::JobRegistry::JoinRequest r;
  r.job_id = job;
  r.fingerprint = auth::job_fingerprint(auth::job_key(zipper::test::test_secret(job), auth::Key{}));
  r.sites = {1, 1};
  r.vrank = rank;
  r.owner = owner;
  r.prefix = prefix;
  return r;
}
}  // namespace

TEST(IdleEviction, PrefixCapThenIdleJobsMakeRoomIncompleteFirst) {
  fw::JobRegistry reg(64, 1000, 100, 16, 3, 50ms);
  std::vector<std::shared_ptr<fw::Connection>> keep;
  const auto join = [&](std::uint64_t job, std::uint32_t rank, const std::string& owner) {
    keep.push_back(conn(keep.size() + 1));
    return reg.join(req(job, rank, owner, "10.0.0.0/24"), keep.back());
  };
  ASSERT_TRUE(join(1, 0, "address 10.0.0.2").job);  // complete below
  ASSERT_TRUE(join(1, 1, "address 10.0.0.2").job);
  ASSERT_TRUE(join(2, 0, "address 10.0.0.3").job);  // incomplete
  ASSERT_TRUE(join(3, 0, "address 10.0.0.3").job);  // incomplete
  // The prefix is full and nobody is idle long enough: refused, naming the option.
  auto r = join(4, 0, "address 10.0.0.4");
  EXPECT_FALSE(r.job);
  EXPECT_NE(r.error.find("--max-jobs-per-prefix"), std::string::npos) << r.error;
  std::this_thread::sleep_for(80ms);
  reg.sample_activity(std::chrono::steady_clock::now() - 60ms);  // all idle since before
  r = join(4, 0, "address 10.0.0.4");
  ASSERT_TRUE(r.job) << r.error;
  ASSERT_EQ(r.evicted.size(), 1u);
  // An incomplete job goes first, of the owner holding most jobs (10.0.0.3).
  EXPECT_FALSE(r.evicted[0]->ready());
  EXPECT_EQ(r.evicted[0]->owner(), "address 10.0.0.3");
  EXPECT_EQ(reg.job_count(), 3u);
  EXPECT_EQ(reg.evictions(), 1u);
  // Next the other incomplete job (the new one is not idle long enough).
  auto victim = reg.evict_idle(std::chrono::steady_clock::now());
  ASSERT_TRUE(victim);
  EXPECT_FALSE(victim->ready());
  // The complete job last, and never one that is not idle long enough.
  EXPECT_FALSE(reg.evict_idle(std::chrono::steady_clock::now() - 1h));
}

TEST(ControlSocketDirectory, OnlyADirectoryOfZipperdsOwn) {
  char d[] = "/tmp/zipper-sockdir-XXXXXX";
  ASSERT_NE(::mkdtemp(d), nullptr);
  const std::string dir = d;
  EXPECT_NO_THROW(fw::check_socket_directory(dir + "/ctl.sock"));  // 0700, ours
  ASSERT_EQ(::chmod(d, 01777), 0);                                 // like /tmp
  try {
    fw::check_socket_directory(dir + "/ctl.sock");
    ADD_FAILURE() << "a world-writable directory was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("writable by no one else"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fw::listen_unix(dir + "/ctl.sock", 0660), std::runtime_error);
  ASSERT_EQ(::chmod(d, 0750), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(d, 65534, 65534), 0);  // another owner
    EXPECT_THROW(fw::check_socket_directory(dir + "/ctl.sock"), std::runtime_error);
  }
  ::rmdir(d);
}
