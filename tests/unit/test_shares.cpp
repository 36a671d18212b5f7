// zipperd's shares: per-class pool shares per job, jobs per owner,
// the layout share of --max-connections, drain refusing every new job, and
// the log limiter per kind and per job.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "forwarder/buffer_pool.h"
#include "forwarder/job_registry.h"
#include "forwarder/log_limiter.h"
#include "test_util.h"

namespace {

namespace fw = zipper::forwarder;
using zipper::test::test_secret;

TEST(PoolShares, ATenantKeepsOutOfTheReserveAndItsShare) {
  fw::BufferPool pool({{1024, 16}, {4096, 8}});
  fw::PoolTenant a, b;
  // Alone: all but the reserve (16 / 8 = 2 buffers of the small class).
  EXPECT_EQ(pool.share(0, 1), 14u);
  std::vector<fw::BufferPool::Buffer> held;
  bool at_share = false;
  // The small class to its share, then the larger class lends to its share.
  for (int i = 0; i < 14 + 7; ++i) {
    auto buf = pool.acquire(1000, &a, 1, &at_share);
    ASSERT_TRUE(buf) << i;
    held.push_back(*buf);
  }
  EXPECT_FALSE(pool.acquire(1000, &a, 1, &at_share));
  EXPECT_TRUE(at_share) << "only the tenant's share stood in the way";
  // Another tenant finds the reserve at once.
  auto other = pool.acquire(1000, &b, 2, &at_share);
  ASSERT_TRUE(other);
  // With two tenants, a holds more than its half: it gets nothing more,
  // even after releasing one, until it is below buffers / 2.
  pool.release(held.back(), &a);
  held.pop_back();
  EXPECT_FALSE(pool.acquire(4000, &a, 2, &at_share));
  EXPECT_EQ(a.held[0], 14u);
  EXPECT_EQ(a.held[1], 6u);
  for (auto& h : held) pool.release(h, &a);
  EXPECT_EQ(a.held[0] + a.held[1], 0u);
  pool.release(*other, &b);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(PoolShares, AnEmptyClassIsNotReportedAsTheTenantsShare) {
  fw::BufferPool pool({{1024, 2}});
  fw::PoolTenant a, b;
  auto x = pool.acquire(10, &a, 1, nullptr);  // share 1 (2 - reserve 1)
  ASSERT_TRUE(x);
  auto y = pool.acquire(10, &b, 2, nullptr);
  ASSERT_TRUE(y);
  bool at_share = true;
  fw::PoolTenant c;
  EXPECT_FALSE(pool.acquire(10, &c, 3, &at_share));
  EXPECT_FALSE(at_share) << "the class is empty: any release may help";
  pool.release(*x, &a);
  pool.release(*y, &b);
}

std::shared_ptr<fw::Connection> conn(std::uint64_t id) {
  return std::make_shared<fw::Connection>(id, 0, nullptr, 4);
}

fw::JobRegistry::JoinRequest req(std::uint64_t job, std::uint32_t rank, std::string owner,
                                 std::uint64_t secret_seed) {
  fw::JobRegistry::JoinRequest r;
  r.job_id = job;
  r.fingerprint = zipper::proto::auth::job_fingerprint(
      zipper::proto::auth::job_key(test_secret(secret_seed), zipper::proto::auth::Key{}));
  r.sites = {1, 1};
  r.vrank = rank;
  r.owner = std::move(owner);
  return r;
}

TEST(JobShares, JobsPerOwnerLayoutShareAndDrain) {
  fw::JobRegistry reg(8, 1000, 100, 2);
  std::vector<std::shared_ptr<fw::Connection>> keep;
  for (std::uint64_t j = 1; j <= 2; ++j) {
    keep.push_back(conn(j));
    EXPECT_TRUE(reg.join(req(j, 0, "address 10.0.0.2", j), keep.back()).job);
  }
  keep.push_back(conn(3));
  auto r = reg.join(req(3, 0, "address 10.0.0.2", 3), keep.back());
  EXPECT_FALSE(r.job);
  EXPECT_NE(r.error.find("--max-jobs-per-user"), std::string::npos) << r.error;
  keep.push_back(conn(4));
  EXPECT_TRUE(reg.join(req(3, 0, "address 10.0.0.3", 3), keep.back()).job);
  // A job that ends gives its owner's place back.
  reg.leave(keep[0]);
  keep.push_back(conn(5));
  EXPECT_TRUE(reg.join(req(5, 0, "address 10.0.0.2", 5), keep.back()).job);
  // Layout share: at most 100 ranks.
  EXPECT_NE(reg.check_layout({51, 50}, 0).find("--max-job-connections-share"), std::string::npos);
  EXPECT_EQ(reg.check_layout({50, 50}, 0), "");
  // Any number of sites counts alike: 40+40+21 is over, 40+40+20 is not.
  EXPECT_NE(reg.check_layout({40, 40, 21}, 0).find("--max-job-connections-share"),
            std::string::npos);
  EXPECT_EQ(reg.check_layout({40, 40, 20}, 99), "");
  EXPECT_EQ(reg.check_layout({40, 40, 20}, 100), "rank 100 outside layout 40+40+20");
  // One site is no job for a bridge; an empty site is no site.
  EXPECT_NE(reg.check_layout({4}, 0).find("invalid layout 4 (2 to 64 sites"), std::string::npos);
  EXPECT_NE(reg.check_layout({4, 0, 2}, 0).find("invalid layout 4+0+2"), std::string::npos);
  // Draining: a rank of a running job joins; a new job is refused, even under
  // a running job's id with another secret, and is counted once.
  auto late = req(2, 1, "address 10.0.0.9", 2);
  late.may_create = false;
  keep.push_back(conn(6));
  EXPECT_TRUE(reg.join(late, keep.back()).job);
  auto twin = req(2, 1, "address 10.0.0.9", 99);
  twin.may_create = false;
  keep.push_back(conn(7));
  auto t = reg.join(twin, keep.back());
  EXPECT_FALSE(t.job);
  EXPECT_TRUE(t.draining);
  EXPECT_TRUE(t.first_refusal);
  twin.vrank = 0;
  keep.push_back(conn(8));
  auto t2 = reg.join(twin, keep.back());
  EXPECT_TRUE(t2.draining);
  EXPECT_FALSE(t2.first_refusal) << "the same job counts once";
}

TEST(JobShares, LabelsDifferForOneIdWithTwoSecrets) {
  const auto fp1 = zipper::proto::auth::job_fingerprint(
      zipper::proto::auth::job_key(test_secret(1), zipper::proto::auth::Key{}));
  const auto fp2 = zipper::proto::auth::job_fingerprint(
      zipper::proto::auth::job_key(test_secret(2), zipper::proto::auth::Key{}));
  const std::string a = fw::Job::job_label(42, fp1), b = fw::Job::job_label(42, fp2);
  EXPECT_EQ(a.size(), 12u);
  EXPECT_NE(a, b);
  EXPECT_NE(a, fw::Job::job_label(43, fp1));
  EXPECT_EQ(a, fw::Job::job_label(42, fp1));
}

TEST(LogLimiter, BoundsLinesPerKindAndPerJobAndCountsTheRest) {
  fw::LogLimiter lim(5, 2, std::chrono::seconds(60));
  int allowed = 0;
  for (int i = 0; i < 100; ++i) allowed += lim.allow("admit", "job1");
  EXPECT_EQ(allowed, 2);  // per job
  allowed = 0;
  for (int j = 0; j < 100; ++j) allowed += lim.allow("admit", "job" + std::to_string(j + 2));
  EXPECT_EQ(allowed, 3);  // the kind's budget of 5, 2 used already
  EXPECT_TRUE(lim.allow("other"));
  auto s = lim.take_suppressed();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first, "admit");
  EXPECT_EQ(s[0].second, 98u + 97u);
  EXPECT_TRUE(lim.take_suppressed().empty());  // nothing new
  for (int i = 0; i < 10; ++i) lim.allow("admit", "x");
  EXPECT_TRUE(lim.take_suppressed().empty()) << "at most one report per window";
}

}  // namespace
