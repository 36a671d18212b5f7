// Fair shares between tenants (forwarder/tenant_share.h): who a tenant is,
// the reserve of --max-jobs kept for tenants holding none, a tenant's cap,
// and the connections one tenant may hold; then the same rules as
// JobRegistry applies them.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "forwarder/job_registry.h"
#include "forwarder/tenant_share.h"
#include "test_util.h"

namespace {

namespace fw = zipper::forwarder;
using fw::JobShare;
using zipper::test::test_secret;

TEST(TenantShare, TheTenantIsTheUidThenThePrefixThenTheOwner) {
  EXPECT_EQ(fw::tenant_of(1000u, "10.1.2.0/24", "uid 1000"), "uid 1000");
  EXPECT_EQ(fw::tenant_of(std::nullopt, "10.1.2.0/24", "address 10.1.2.3"), "prefix 10.1.2.0/24");
  EXPECT_EQ(fw::tenant_of(std::nullopt, "", "address mlx5_0:1"), "address mlx5_0:1");
  // Two users behind one prefix are two tenants with MUNGE, one without.
  EXPECT_NE(fw::tenant_of(1000u, "10.1.2.0/24", "uid 1000"),
            fw::tenant_of(1001u, "10.1.2.0/24", "uid 1001"));
}

TEST(TenantShare, ReserveIsAnEighthRoundedDown) {
  EXPECT_EQ(fw::job_reserve(0), 0u);
  EXPECT_EQ(fw::job_reserve(1), 0u);
  EXPECT_EQ(fw::job_reserve(7), 0u);  // small servers keep no reserve
  EXPECT_EQ(fw::job_reserve(8), 1u);
  EXPECT_EQ(fw::job_reserve(15), 1u);
  EXPECT_EQ(fw::job_reserve(16), 2u);
  EXPECT_EQ(fw::job_reserve(64), 8u);
  EXPECT_EQ(fw::job_reserve(1u << 20), 1u << 17);
}

TEST(TenantShare, JobShareDecisions) {
  // --max-jobs 64 (reserve 8), a tenant cap of 32.
  EXPECT_EQ(fw::job_share(0, 64, 0, 32), JobShare::kAdmit);
  EXPECT_EQ(fw::job_share(31, 64, 31, 32), JobShare::kAdmit);
  EXPECT_EQ(fw::job_share(32, 64, 32, 32), JobShare::kTenantAtCap);
  // 56 jobs of several tenants: one that holds jobs is kept out of the reserve...
  EXPECT_EQ(fw::job_share(55, 64, 10, 32), JobShare::kAdmit);
  EXPECT_EQ(fw::job_share(56, 64, 10, 32), JobShare::kReserveForNew);
  EXPECT_EQ(fw::job_share(63, 64, 1, 32), JobShare::kReserveForNew);
  // ...while a tenant holding none takes it, up to the last job.
  EXPECT_EQ(fw::job_share(56, 64, 0, 32), JobShare::kAdmit);
  EXPECT_EQ(fw::job_share(63, 64, 0, 32), JobShare::kAdmit);
  EXPECT_EQ(fw::job_share(64, 64, 0, 32), JobShare::kServerFull);
  // The cap is checked first: a tenant at its cap is told so, full or not.
  EXPECT_EQ(fw::job_share(64, 64, 32, 32), JobShare::kTenantAtCap);
  // A cap of 0 refuses every job; --max-jobs 2 has no reserve.
  EXPECT_EQ(fw::job_share(0, 64, 0, 0), JobShare::kTenantAtCap);
  EXPECT_EQ(fw::job_share(1, 2, 1, 5), JobShare::kAdmit);
  EXPECT_EQ(fw::job_share(2, 2, 0, 5), JobShare::kServerFull);
}

TEST(TenantShare, ConnectionCap) {
  EXPECT_EQ(fw::tenant_connection_cap(16384, 50), 8192u);
  EXPECT_EQ(fw::tenant_connection_cap(200, 50), 100u);
  EXPECT_EQ(fw::tenant_connection_cap(3, 10), 1u);                      // at least one
  EXPECT_EQ(fw::tenant_connection_cap(0xffffffffu, 100), 0xffffffffu);  // no overflow
}

std::shared_ptr<fw::Connection> conn(std::uint64_t id) {
  return std::make_shared<fw::Connection>(id, 0, nullptr, 4);
}

fw::JobRegistry::JoinRequest req(std::uint64_t job, std::uint32_t rank, const std::string& address,
                                 std::optional<std::uint32_t> uid = std::nullopt) {
  fw::JobRegistry::JoinRequest r;
  r.job_id = job;
  r.fingerprint = zipper::proto::auth::job_fingerprint(
      zipper::proto::auth::job_key(test_secret(job), zipper::proto::auth::Key{}));
  r.sites = {1, 1};
  r.vrank = rank;
  r.uid = uid;
  r.owner = uid ? "uid " + std::to_string(*uid) : "address " + address;
  r.prefix = address.substr(0, address.rfind('.')) + ".0/24";
  return r;
}

class Registry {
 public:
  Registry(std::uint32_t max_jobs, std::uint32_t max_layout, std::uint32_t per_owner,
           std::uint32_t per_prefix)
      : reg_(max_jobs, 1000, max_layout, per_owner, per_prefix) {}
  fw::JobRegistry::JoinResult join(std::uint64_t job, std::uint32_t rank,
                                   const std::string& address,
                                   std::optional<std::uint32_t> uid = std::nullopt) {
    keep_.push_back(conn(keep_.size() + 1));
    return reg_.join(req(job, rank, address, uid), keep_.back());
  }
  fw::JobRegistry& reg() { return reg_; }
  const std::shared_ptr<fw::Connection>& last() const { return keep_.back(); }

 private:
  fw::JobRegistry reg_;
  std::vector<std::shared_ptr<fw::Connection>> keep_;
};

// --max-jobs 16 (reserve 2), 8 per prefix and per owner. One tenant's 8 jobs
// (from two addresses of its prefix): its 9th is refused. A second tenant
// grows to 14 jobs in all; beyond that it is kept out of the reserve, which
// two new tenants' first jobs take; only then is zipperd full.
TEST(TenantShare, ATenantAtItsShareIsRefusedAndOthersAreAdmitted) {
  Registry r(16, 100, 8, 8);
  for (std::uint64_t j = 1; j <= 8; ++j)
    ASSERT_TRUE(r.join(j, 0, j % 2 ? "10.0.0.1" : "10.0.0.2").job) << j;
  auto x = r.join(9, 0, "10.0.0.3");
  EXPECT_FALSE(x.job);
  EXPECT_NE(x.error.find("--max-jobs-per-prefix"), std::string::npos) << x.error;
  for (std::uint64_t j = 10; j < 16; ++j) ASSERT_TRUE(r.join(j, 0, "10.0.1.1").job) << j;
  ASSERT_EQ(r.reg().job_count(), 14u);
  x = r.join(16, 0, "10.0.1.1");
  EXPECT_FALSE(x.job);
  EXPECT_NE(x.error.find("kept for tenants that hold no job"), std::string::npos) << x.error;
  EXPECT_TRUE(r.join(17, 0, "10.0.2.1").job);
  EXPECT_TRUE(r.join(18, 0, "10.0.3.1").job);
  x = r.join(19, 0, "10.0.4.1");
  EXPECT_FALSE(x.job);
  EXPECT_NE(x.error.find("(--max-jobs)"), std::string::npos) << x.error;
  // A rank of a running job is admitted whatever the shares.
  EXPECT_TRUE(r.join(1, 1, "10.0.0.1").job);
}

// With MUNGE the tenant is the uid: one user's jobs never count against
// another user behind the same prefix, nor against jobs without a uid.
TEST(TenantShare, MungeUsersBehindOnePrefixAreTenantsOfTheirOwn) {
  Registry r(64, 100, 4, 4);
  for (std::uint64_t j = 1; j <= 4; ++j) ASSERT_TRUE(r.join(j, 0, "10.0.0.1", 1000).job);
  auto x = r.join(5, 0, "10.0.0.1", 1000);
  EXPECT_FALSE(x.job);
  EXPECT_NE(x.error.find("--max-jobs-per-user"), std::string::npos) << x.error;
  EXPECT_TRUE(r.join(6, 0, "10.0.0.1", 1001).job);
  EXPECT_TRUE(r.join(7, 0, "10.0.0.9").job);
}

// The admitted ranks of one tenant's jobs share --max-job-connections-share
// of --max-connections (here 4): a rank beyond it is refused, another
// tenant's are not, and a rank that leaves gives its place back.
TEST(TenantShare, ConnectionsAreSharedPerTenant) {
  Registry r(64, 4, 16, 32);
  ASSERT_TRUE(r.join(1, 0, "10.0.0.1").job);
  ASSERT_TRUE(r.join(1, 1, "10.0.0.2").job);
  ASSERT_TRUE(r.join(2, 0, "10.0.0.1").job);
  ASSERT_TRUE(r.join(2, 1, "10.0.0.1").job);
  const auto mine = r.last();
  auto x = r.join(3, 0, "10.0.0.3");
  EXPECT_FALSE(x.job);
  EXPECT_NE(x.error.find("--max-job-connections-share"), std::string::npos) << x.error;
  EXPECT_EQ(r.reg().job_count(), 2u) << "a refused job must not stay registered";
  ASSERT_TRUE(r.join(4, 0, "10.0.1.1").job);
  const auto other = r.last();
  ASSERT_TRUE(r.join(4, 1, "10.0.1.1").job);
  r.reg().leave(other);
  EXPECT_FALSE(r.join(3, 0, "10.0.0.3").job);  // another tenant's departure frees nothing here
  r.reg().leave(mine);
  EXPECT_TRUE(r.join(3, 0, "10.0.0.3").job);
}

}  // namespace
