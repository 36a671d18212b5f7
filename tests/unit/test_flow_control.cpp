// zipperd's collaborators on their own, without sockets or threads: route()
// (a frame's destination inside its job) and FlowControl (credit, inbound
// credit of a destination, pool buffers, parking by reason, and what a
// frame's departure gives back).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "forwarder/connection_host.h"
#include "forwarder/flow_control.h"
#include "forwarder/forwarder_config.h"
#include "forwarder/job_registry.h"
#include "forwarder/router.h"
#include "forwarder_fakes.h"
#include "test_util.h"

namespace {

namespace fw = zipper::forwarder;
namespace proto = zipper::proto;
using namespace zipper::test;  // fakes, frame builders, test secrets
using proto::FrameType;

constexpr std::uint32_t kCredits = 4;  // frames per connection

fw::Config small_config() {
  fw::Config cfg;
  cfg.listen.push_back({"A", {}});
  cfg.conn_credits = kCredits;
  cfg.max_frame = 4096;
  cfg.max_memory = 3 * 4096;
  cfg.pools = {{4096, 3}};
  fw::check_config(cfg);
  return cfg;
}

std::shared_ptr<fw::Connection> conn(std::uint64_t id) {
  return std::make_shared<fw::Connection>(id, 0, std::make_unique<FakeLink>(), kCredits);
}

// Joins `c` as rank `vrank` of 1+1 job `job`.
void join(fw::JobRegistry& reg, std::uint64_t job, std::uint32_t vrank,
          const std::shared_ptr<fw::Connection>& c) {
  fw::JobRegistry::JoinRequest r;
  r.job_id = job;
  r.fingerprint = proto::auth::job_fingerprint(proto::auth::job_key(test_secret(job), {}));
  r.sites = {1, 1};
  r.vrank = vrank;
  r.owner = "address 10.0.0." + std::to_string(job);
  ASSERT_TRUE(reg.join(r, c).job);
}

proto::FrameHeader eager(std::uint64_t job, std::uint32_t src, std::uint32_t dst,
                         std::uint32_t len) {
  auto h = header(FrameType::kEager, job, src, dst);
  h.payload_len = len;
  return h;
}

TEST(Router, ADestinationIsARankOfTheSendersOwnJob) {
  fw::JobRegistry reg(8, 1000, 100, 8);
  auto a0 = conn(1), a1 = conn(2), b0 = conn(3), b1 = conn(4);
  join(reg, 1, 0, a0);
  join(reg, 1, 1, a1);
  join(reg, 2, 0, b0);
  join(reg, 2, 1, b1);
  EXPECT_EQ(fw::route(*a0, 1), a1);
  EXPECT_EQ(fw::route(*b0, 1), b1) << "rank 1 of job 2, never job 1's";
  EXPECT_EQ(fw::route(*a0, 7), nullptr) << "no such rank";
  // A destination that closed and left is not served from the remembered
  // answer (a rank is never admitted twice: it stays unreachable).
  a1->closed = true;
  reg.leave(a1);
  EXPECT_EQ(fw::route(*a0, 1), nullptr);
  EXPECT_EQ(fw::route(*b0, 1), b1);
  EXPECT_TRUE(fw::is_data_frame(FrameType::kChunk));
  EXPECT_FALSE(fw::is_data_frame(FrameType::kPing));
}

struct Flow {
  fw::Config cfg = small_config();
  fw::Counters counters;
  fw::RateLimitedLog log;
  FakeHost host;
  fw::FlowControl flow{cfg, counters, log, host};
  fw::JobRegistry reg{8, 1000, 100, 8};
  std::shared_ptr<fw::Connection> sender = conn(1), receiver = conn(2);
  Flow() {
    join(reg, 1, 0, sender);
    join(reg, 1, 1, receiver);
  }
};

TEST(FlowControl, AFrameLeavingGivesBackBufferShareAndCredit) {
  Flow f;
  bool violation = false;
  auto p = f.flow.reserve(f.sender, eager(1, 0, 1, 4000), &violation);
  ASSERT_TRUE(p);
  EXPECT_FALSE(violation);
  EXPECT_EQ(p->bytes.size(), 4000u);
  EXPECT_EQ(f.sender->credit.in_use(), 1u);
  EXPECT_EQ(f.receiver->inbound.load(), 1u);
  EXPECT_EQ(f.sender->job->memory_held.load(), 4000u);
  EXPECT_EQ(f.flow.pool().stats()[0].in_use, 1u);
  const auto releases = f.sender->job->releases.load();
  *p = proto::Payload{};  // the destination's queue lets go of it
  EXPECT_EQ(f.sender->credit.in_use(), 0u);
  EXPECT_EQ(f.sender->credit.returnable(), 1u) << "below a quarter of 4: rides on the next frame";
  EXPECT_EQ(f.receiver->inbound.load(), 0u);
  EXPECT_EQ(f.sender->job->memory_held.load(), 0u);
  EXPECT_EQ(f.flow.pool().stats()[0].in_use, 0u);
  EXPECT_EQ(f.sender->job->releases.load(), releases + 1);
  EXPECT_EQ(f.host.wakes, 0) << "nobody was parked";
}

TEST(FlowControl, CreditIsReturnedInAFrameOnceAQuarterIsDue) {
  Flow f;
  bool violation = false;
  for (int i = 0; i < 2; ++i) {
    auto p = f.flow.reserve(f.sender, eager(1, 0, 1, 0), &violation);
    ASSERT_TRUE(p);
  }
  // Two frames of 4 returned (>= a quarter): one CREDIT frame, once.
  ASSERT_EQ(fake_link_of(f.sender).posted.size(), 1u);
  EXPECT_EQ(fake_link_of(f.sender).posted[0].hdr.type, FrameType::kCredit);
  EXPECT_EQ(f.sender->credit.returnable(), 2u);
}

TEST(FlowControl, OverrunningTheGrantIsAViolationReportedToTheClient) {
  Flow f;
  bool violation = false;
  std::vector<proto::Payload> held;
  for (std::uint32_t i = 0; i < kCredits; ++i) {
    auto h = eager(1, 0, 1, 0);
    h.type = FrameType::kRts;  // no destination credit involved: only the sender's
    auto p = f.flow.reserve(f.sender, h, &violation);
    ASSERT_TRUE(p) << i;
    f.receiver->inbound = 0;
    held.push_back(std::move(*p));
  }
  EXPECT_EQ(f.counters.credit_stalls.load(), 1u) << "no room left for a largest frame";
  EXPECT_FALSE(f.flow.reserve(f.sender, eager(1, 0, 1, 0), &violation));
  EXPECT_TRUE(violation);
  ASSERT_FALSE(fake_link_of(f.sender).posted.empty());
  const auto& err = fake_link_of(f.sender).posted.back();
  EXPECT_EQ(err.hdr.type, FrameType::kError);
  EXPECT_EQ(err.hdr.flags, static_cast<std::uint8_t>(proto::ErrorCode::kCreditOverrun));
}

TEST(FlowControl, AFullDestinationParksTheSenderUntilItsJobReleases) {
  Flow f;
  f.receiver->inbound = kCredits;  // the receiver does not read
  bool violation = false;
  EXPECT_FALSE(f.flow.reserve(f.sender, eager(1, 0, 1, 100), &violation));
  EXPECT_FALSE(violation);
  f.flow.park(*f.sender, true);
  EXPECT_EQ(f.sender->park, fw::ParkReason::kJobShare);
  EXPECT_EQ(f.sender->job->share_parked.load(), 1);
  EXPECT_FALSE(fw::FlowControl::may_retry(*f.sender)) << "nothing of its job left yet";
  ++f.sender->job->releases;
  EXPECT_TRUE(fw::FlowControl::may_retry(*f.sender));
  f.flow.park(*f.sender, false);
  EXPECT_EQ(f.sender->park, fw::ParkReason::kNone);
  EXPECT_EQ(f.sender->job->share_parked.load(), 0);
  EXPECT_FALSE(fw::FlowControl::may_retry(*f.sender));
}

TEST(FlowControl, AJobAtItsPoolShareParksAndAReleaseWakesMemoryWaiters) {
  Flow f;
  // A second job: neither may take every buffer of the one class.
  auto other0 = conn(3), other1 = conn(4);
  join(f.reg, 2, 0, other0);
  join(f.reg, 2, 1, other1);
  f.flow.set_jobs(2);
  bool violation = false;
  std::vector<proto::Payload> held;
  while (auto p = f.flow.reserve(f.sender, eager(1, 0, 1, 4000), &violation)) {
    held.push_back(std::move(*p));
    f.receiver->inbound = 0;
    ASSERT_LT(held.size(), 3u) << "one job took the whole class";
  }
  ASSERT_FALSE(violation);
  ASSERT_FALSE(held.empty());
  // Parked at its class share: only its own job's release lets it retry.
  EXPECT_GT(f.sender->share_wait, 0u);
  f.flow.park(*f.sender, true);
  EXPECT_EQ(f.sender->park, fw::ParkReason::kJobShare);
  EXPECT_FALSE(fw::FlowControl::may_retry(*f.sender));
  // A connection of the other job waiting for memory (the global budget).
  other0->share_wait = 0;
  f.flow.park(*other0, true);
  EXPECT_EQ(other0->park, fw::ParkReason::kPoolMemory);
  EXPECT_TRUE(fw::FlowControl::may_retry(*other0)) << "memory waiters retry at every wake";
  const int wakes = f.host.wakes;
  held.pop_back();  // one of job 1's frames leaves zipperd
  EXPECT_GT(f.host.wakes, wakes);
  EXPECT_TRUE(fw::FlowControl::may_retry(*f.sender));
  f.flow.park(*f.sender, false);
  f.flow.park(*other0, false);
  EXPECT_EQ(f.sender->job->share_parked.load(), 0);
  // Nobody parked any more: a release wakes nobody.
  const int quiet = f.host.wakes;
  held.clear();
  EXPECT_EQ(f.host.wakes, quiet);
}

}  // namespace
