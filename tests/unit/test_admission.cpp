// zipperd's Admission on its own, over links that keep what is posted to them
// (no sockets, no threads): HELLO, CHALLENGE, AUTH, HELLO_ACK and JOB_READY,
// every refusal with its error code and counter, and draining.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "forwarder/admission.h"
#include "forwarder_fakes.h"
#include "test_util.h"

namespace {

namespace fw = zipper::forwarder;
namespace proto = zipper::proto;
using namespace zipper::test;  // fakes, frame builders, test secrets
using proto::ErrorCode;
using proto::FrameType;

struct Gate {
  fw::Config cfg = [] {
    fw::Config c;
    c.listen = {{"A", {}}, {"B", {}}};
    fw::check_config(c);
    return c;
  }();
  fw::Counters counters;
  fw::RateLimitedLog log;
  FakeHost host;
  fw::FlowControl flow{cfg, counters, log, host};
  fw::JobRegistry reg{8, 1000, 100, 8};
  fw::Admission admission{cfg, reg, flow, counters, log, host};
  std::uint64_t next_id = 1;

  std::shared_ptr<fw::Connection> conn(int side) {
    return std::make_shared<fw::Connection>(
        next_id++, side, std::make_unique<FakeLink>("10.0.0.7:4000"), cfg.conn_credits);
  }
};

proto::Payload bytes(std::vector<std::byte> v) {
  auto p = proto::Payload::allocate(v.size());
  std::copy(v.begin(), v.end(), p.bytes.begin());
  return p;
}

void hello(Gate& s, const std::shared_ptr<fw::Connection>& c, std::uint64_t job,
           std::uint32_t vrank, std::uint32_t np_low = 1, std::uint32_t np_high = 1) {
  s.admission.on_hello(c, header(FrameType::kHello, job, vrank, 0),
                       bytes(hello_payload(vrank, np_low, np_high)));
}

// Answers the CHALLENGE `c` was sent with the proof of `secret`.
// With `tamper`, one bit of the proof's tag is flipped.
void auth(Gate& s, const std::shared_ptr<fw::Connection>& c, const proto::auth::Secret& secret,
          bool tamper = false) {
  ASSERT_FALSE(fake_link_of(c).posted.empty());
  const auto& ch_frame = fake_link_of(c).posted.back();
  ASSERT_EQ(ch_frame.hdr.type, FrameType::kChallenge);
  proto::auth::ChallengePayload ch;
  ASSERT_TRUE(proto::auth::decode_challenge(ch_frame.payload.bytes, &ch));
  EXPECT_EQ(ch.server_key, s.admission.host_public_key());
  auto proof = proto::auth::prove(secret, ch, c->hello, {}, {});
  if (tamper) proof.auth.tag[0] ^= std::byte{1};
  s.admission.on_auth(c, bytes(proto::auth::encode_auth(proof.auth)));
}

ErrorCode error_of(const std::shared_ptr<fw::Connection>& c) {
  const auto& f = fake_link_of(c).posted.back();
  EXPECT_EQ(f.hdr.type, FrameType::kError);
  return static_cast<ErrorCode>(f.hdr.flags);
}

TEST(Admission, HelloAuthAdmitsBothRanksAndAnnouncesTheJob) {
  Gate s;
  auto low = s.conn(0), high = s.conn(1);
  hello(s, low, 7, 0);
  auth(s, low, test_secret(7));
  ASSERT_TRUE(low->admitted.load());
  EXPECT_EQ(fake_link_of(low).posted.back().hdr.type, FrameType::kHelloAck);
  hello(s, high, 7, 1);
  auth(s, high, test_secret(7));
  ASSERT_TRUE(high->admitted.load());
  EXPECT_EQ(low->job, high->job);
  // The job is complete: JOB_READY to both, after each one's HELLO_ACK.
  EXPECT_EQ(fake_link_of(low).posted.back().hdr.type, FrameType::kJobReady);
  EXPECT_EQ(fake_link_of(high).posted.back().hdr.type, FrameType::kJobReady);
  EXPECT_TRUE(s.host.closed.empty());
  EXPECT_EQ(s.counters.refused_admissions.load() + s.counters.auth_failures.load(), 0u);
}

TEST(Admission, RefusalsSendTheirErrorCloseAndCount) {
  Gate s;
  auto twice = s.conn(0);
  hello(s, twice, 7, 0);
  hello(s, twice, 7, 0);
  EXPECT_EQ(error_of(twice), ErrorCode::kBadHello);
  auto wrong_side = s.conn(0);
  hello(s, wrong_side, 7, 1);  // the high group connects on side B
  EXPECT_EQ(error_of(wrong_side), ErrorCode::kBadHello);
  auto bad_layout = s.conn(0);
  hello(s, bad_layout, 7, 5, 1, 1);  // rank 5 of a 1+1 job
  EXPECT_EQ(error_of(bad_layout), ErrorCode::kBadHello);
  EXPECT_EQ(s.counters.refused_admissions.load(), 3u);

  auto early = s.conn(0);
  s.admission.on_auth(early, proto::Payload{});
  EXPECT_EQ(error_of(early), ErrorCode::kAuth);
  // (Another secret is another job of the same id, admitted on its own:
  // test_shares.cpp.) A proof that does not verify is refused.
  auto forged = s.conn(0);
  hello(s, forged, 7, 0);
  auth(s, forged, test_secret(7), true);
  EXPECT_EQ(error_of(forged), ErrorCode::kAuth);
  EXPECT_FALSE(forged->admitted.load());
  EXPECT_EQ(s.counters.auth_failures.load(), 2u);
  EXPECT_EQ(s.host.closed.size(), 5u) << "every refused connection is closed";
}

TEST(Admission, DrainingRefusesNewJobsButAdmitsRanksOfRunningOnes) {
  Gate s;
  auto low = s.conn(0);
  hello(s, low, 7, 0);
  auth(s, low, test_secret(7));
  ASSERT_TRUE(low->admitted.load());
  s.admission.set_draining(true);
  EXPECT_TRUE(s.admission.draining());
  EXPECT_EQ(error_of(low), ErrorCode::kDraining) << "running ranks are told to move";
  auto other = s.conn(0);
  hello(s, other, 9, 0);
  auth(s, other, test_secret(9));
  EXPECT_EQ(error_of(other), ErrorCode::kBadHello);
  EXPECT_EQ(s.counters.refused_draining.load(), 1u);
  auto high = s.conn(1);
  hello(s, high, 7, 1);
  auth(s, high, test_secret(7));
  EXPECT_TRUE(high->admitted.load()) << "a rank of the running job still joins";
}

}  // namespace
