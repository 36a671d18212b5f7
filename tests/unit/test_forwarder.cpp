// zipperd core (forwarder::Forwarder) driven in-process over loopback: two
// listeners ("A" and "B") on 127.0.0.1 port 0, clients speaking the frame
// protocol through proto links.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "forwarder/forwarder.h"
#include "test_util.h"

namespace {

using namespace zipper;
using namespace zipper::test;
using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
namespace fwd = zipper::forwarder;

constexpr int kA = 0, kB = 1;  // listener (side) indices

fwd::Config base_config() {
  fwd::Config c;
  std::string why;
  const auto ep = proto::parse_endpoint("tcp:127.0.0.1:0", &why);
  if (!ep) throw std::runtime_error(why);
  c.listen = {{"A", *ep}, {"B", *ep}};
  c.max_frame = 64u << 10;
  c.conn_credits = 4;  // frames
  c.max_memory = 8u << 20;
  c.hello_timeout_ms = 10000;
  return c;
}

std::string describe(const Frame& f) {
  std::string s = std::string(proto::to_string(f.hdr.type)) + " job " +
                  std::to_string(f.hdr.job_id) + " src " + std::to_string(f.hdr.src) + " dst " +
                  std::to_string(f.hdr.dst);
  if (f.hdr.type == FrameType::kError)
    s += " code " + std::to_string(f.hdr.flags) + " '" + f.text() + "'";
  return s;
}

void expect_error(const std::optional<Frame>& f, ErrorCode code, std::uint64_t job,
                  std::uint32_t src, std::uint32_t dst, std::uint64_t seq = 0) {
  ASSERT_TRUE(f.has_value()) << "no frame arrived";
  ASSERT_EQ(f->hdr.type, FrameType::kError) << describe(*f);
  EXPECT_EQ(f->hdr.flags, static_cast<std::uint8_t>(code)) << describe(*f);
  EXPECT_EQ(f->hdr.job_id, job) << describe(*f);
  EXPECT_EQ(f->hdr.src, src) << describe(*f);
  EXPECT_EQ(f->hdr.dst, dst) << describe(*f);
  EXPECT_EQ(f->hdr.seq, seq) << describe(*f);
  EXPECT_FALSE(f->payload.empty()) << "an error frame carries a reason";
}

// Every header field except `credits`, which zipperd rewrites to return credit.
void expect_relayed(const FrameHeader& sent, const FrameHeader& got) {
  EXPECT_EQ(got.type, sent.type);
  EXPECT_EQ(got.flags, sent.flags);
  EXPECT_EQ(got.job_id, sent.job_id);
  EXPECT_EQ(got.src, sent.src);
  EXPECT_EQ(got.dst, sent.dst);
  EXPECT_EQ(got.tag, sent.tag);
  EXPECT_EQ(got.context_id, sent.context_id);
  EXPECT_EQ(got.seq, sent.seq);
  EXPECT_EQ(got.payload_len, sent.payload_len);
  EXPECT_EQ(got.msg_len, sent.msg_len);
  EXPECT_EQ(got.chunk_offset, sent.chunk_offset);
}

FrameHeader eager(std::uint64_t job, std::uint32_t src, std::uint32_t dst, std::uint64_t seq,
                  std::size_t len) {
  FrameHeader h = header(FrameType::kEager, job, src, dst);
  h.seq = seq;
  h.tag = 1000 + static_cast<std::int32_t>(seq);
  h.context_id = 3;
  h.msg_len = len;
  return h;
}

class Forwarder : public ::testing::Test {
 protected:
  void SetUp() override {
    // zipperd logs every connection at info; keep test output readable
    // unless asked for (ZIPPER_TEST_LOG=debug).
    const char* lvl = std::getenv("ZIPPER_TEST_LOG");
    spdlog::set_level(lvl ? spdlog::level::from_str(lvl) : spdlog::level::off);
  }
  void TearDown() override {
    if (fwd_) fwd_->stop();
    clients_.clear();
    fwd_.reset();
  }

  void start(const fwd::Config& cfg = base_config()) {
    fwd_ = std::make_unique<fwd::Forwarder>(cfg);
    fwd_->start();
    addrs_ = fwd_->addresses();
    ASSERT_EQ(addrs_.size(), cfg.listen.size());
  }

  FrameClient& connect(int side) {
    clients_.push_back(FrameClient::connect(addrs_.at(static_cast<std::size_t>(side))));
    return *clients_.back();
  }
  /// Disconnects a client (closes its socket without BYE).
  void drop(FrameClient& c) {
    for (auto it = clients_.begin(); it != clients_.end(); ++it)
      if (it->get() == &c) {
        clients_.erase(it);
        return;
      }
  }
  std::vector<FrameClient*> all() {
    std::vector<FrameClient*> v;
    for (auto& c : clients_) v.push_back(c.get());
    return v;
  }
  std::optional<Frame> next(FrameClient& c, milliseconds timeout = kWait) {
    return next_frame(c, all(), timeout);
  }
  /// Next frame, which must be of `type` (throws otherwise).
  Frame expect(FrameClient& c, FrameType type) {
    auto f = next(c);
    if (!f)
      throw std::runtime_error("timed out waiting for " + std::string(proto::to_string(type)));
    if (f->hdr.type != type)
      throw std::runtime_error("expected " + std::string(proto::to_string(type)) + ", got " +
                               describe(*f));
    return *f;
  }
  bool wait_closed(FrameClient& c, milliseconds timeout = kWait) {
    return pump_until(
        all(), [&] { return c.closed(); }, timeout);
  }
  /// Nothing arrives at `c` for `quiet` (other clients keep being progressed).
  void expect_silence(FrameClient& c, milliseconds quiet = milliseconds(150)) {
    pump_for(all(), quiet);
    EXPECT_TRUE(c.inbox().empty()) << "unexpected " << describe(c.inbox().front());
  }

  /// Connects, says hello and checks the HELLO_ACK.
  FrameClient& join(int side, std::uint64_t job, std::uint32_t vrank, std::uint32_t np_low,
                    std::uint32_t np_high) {
    FrameClient& c = connect(side);
    send_hello(c, job, vrank, np_low, np_high);
    const Frame ack = expect(c, FrameType::kHelloAck);
    EXPECT_EQ(ack.hdr.job_id, job);
    EXPECT_EQ(ack.hdr.dst, vrank);
    proto::HelloAckPayload p;
    EXPECT_TRUE(proto::decode_hello_ack(ack.payload, &p));
    EXPECT_EQ(p.credits, fwd_->config().conn_credits);
    EXPECT_EQ(p.max_payload, fwd_->config().max_frame);
    EXPECT_EQ(c.credits(), static_cast<std::int64_t>(fwd_->config().conn_credits));
    return c;
  }
  /// Rank 0 on A, rank 1 on B, job 1+1, both past JOB_READY.
  std::pair<FrameClient*, FrameClient*> join_pair(std::uint64_t job) {
    FrameClient& a = join(kA, job, 0, 1, 1);
    FrameClient& b = join(kB, job, 1, 1, 1);
    for (FrameClient* c : {&a, &b}) {
      const Frame r = expect(*c, FrameType::kJobReady);
      EXPECT_EQ(r.hdr.job_id, job);
      EXPECT_EQ(r.hdr.dst, c == &a ? 0u : 1u);
    }
    return {&a, &b};
  }

  /// Sends once `c` has the credit for it, progressing everyone meanwhile.
  void send_gated(FrameClient& c, const FrameHeader& h, const std::vector<std::byte>& payload) {
    const auto cost =
        static_cast<std::int64_t>(proto::credit_cost(static_cast<std::uint32_t>(payload.size())));
    if (!pump_until(all(), [&] { return c.credits() >= cost; }))
      throw std::runtime_error("no credit returned (have " + std::to_string(c.credits()) + ")");
    c.send(h, payload);
  }

  /// Credit below a quarter of the grant is not sent on its own; it rides on
  /// the next frame to the client. zipperd releases a frame's credit just
  /// after writing it, so on a loaded machine the release can trail the
  /// receiver by a while: `peer` sends empty messages to `c` until all of c's
  /// credit is back (or the deadline passes). Returns c's final balance.
  std::int64_t settle_credit(FrameClient& c, std::uint32_t c_rank, FrameClient& peer,
                             std::uint32_t peer_rank, std::uint64_t job) {
    const auto grant = static_cast<std::int64_t>(fwd_->config().conn_credits);
    const auto deadline = Clock::now() + kWait;
    std::uint64_t seq = 1ull << 40;
    while (c.credits() != grant && Clock::now() < deadline) {
      peer.send(eager(job, peer_rank, c_rank, seq++, 0));
      const Frame f = expect(c, FrameType::kEager);
      if (f.hdr.payload_len != 0) throw std::runtime_error("unexpected " + describe(f));
      if (c.credits() != grant) pump_for(all(), milliseconds(5));
    }
    return c.credits();
  }

  std::unique_ptr<fwd::Forwarder> fwd_;
  std::vector<std::string> addrs_;
  std::vector<std::unique_ptr<FrameClient>> clients_;
};

// ---- configuration and lifecycle ------------------------------------------

TEST_F(Forwarder, ConfigValidation) {
  auto expect_invalid = [](fwd::Config c, const char* what) {
    try {
      fwd::Forwarder f(c);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()), "") << what;
    }
  };
  fwd::Config c = base_config();
  c.listen.clear();
  expect_invalid(c, "no listener");
  c = base_config();
  c.max_frame = 1023;
  expect_invalid(c, "max_frame below 1 KiB");
  c = base_config();
  c.max_frame = proto::kMaxPayloadLimit + 1;
  c.conn_credits = 0xFFFFFFFFu;
  expect_invalid(c, "max_frame above 64 MiB");
  c = base_config();
  c.conn_credits = 1;
  expect_invalid(c, "credits below two frames");
  c = base_config();
  c.conn_credits = fwd::kMaxConnCredits + 1;
  expect_invalid(c, "credits above the limit");
  c = base_config();
  c.max_memory = c.max_frame;
  expect_invalid(c, "memory below two of the largest frames");
  c = base_config();
  c.pools = {{1024, 4}, {c.max_frame, 200}};  // 12.5 MiB > 8 MiB
  expect_invalid(c, "pools larger than the memory limit");
  c = base_config();
  c.pools = {{1024, 4}, {c.max_frame / 2, 4}};
  expect_invalid(c, "no pool buffer holds the largest frame");
  // The smallest valid settings.
  c = base_config();
  c.max_frame = 1024;
  c.conn_credits = 2;
  c.max_memory = 2 * 1024;
  EXPECT_NO_THROW(fwd::Forwarder f(c));
}

TEST_F(Forwarder, StopIsIdempotent) {
  {
    fwd::Forwarder never_started(base_config());
    never_started.stop();
    never_started.stop();
  }  // destructor after stop(): fine
  start();
  auto [a, b] = join_pair(1);
  fwd_->stop();
  fwd_->stop();
  // Every connection is closed by stop().
  EXPECT_TRUE(wait_closed(*a));
  EXPECT_TRUE(wait_closed(*b));
  fwd_->stop();
  fwd_.reset();  // destructor calls stop() again
}

TEST_F(Forwarder, StartFailsOnBusyPort) {
  start();
  fwd::Config c = base_config();
  std::string why;
  c.listen[1].endpoint = *proto::parse_endpoint(addrs_[0], &why);
  fwd::Forwarder second(c);
  EXPECT_THROW(second.start(), std::runtime_error);
  second.stop();
  // The first one still serves.
  join_pair(1);
}

TEST_F(Forwarder, AddressesAreBoundLoopbackPorts) {
  start();
  ASSERT_EQ(addrs_.size(), 2u);
  EXPECT_NE(addrs_[0], addrs_[1]);
  for (const auto& a : addrs_) {
    std::string why;
    auto ep = proto::parse_endpoint(a, &why);
    ASSERT_TRUE(ep) << why;
    EXPECT_EQ(ep->host, "127.0.0.1");
    EXPECT_NE(ep->port, 0);
  }
}

// ---- hello and job readiness ----------------------------------------------

TEST_F(Forwarder, HelloAckThenJobReadyOnceAllRanksConnected) {
  start();
  FrameClient& r0 = join(kA, 7, 0, 2, 1);
  FrameClient& r1 = join(kA, 7, 1, 2, 1);
  expect_silence(r0);  // rank 2 is still missing
  EXPECT_TRUE(r1.inbox().empty());
  FrameClient& r2 = join(kB, 7, 2, 2, 1);
  std::uint32_t vrank = 0;
  for (FrameClient* c : {&r0, &r1, &r2}) {
    const Frame f = expect(*c, FrameType::kJobReady);
    EXPECT_EQ(f.hdr.job_id, 7u);
    EXPECT_EQ(f.hdr.dst, vrank++);
    EXPECT_TRUE(f.payload.empty());
  }
  EXPECT_EQ(fwd_->stats().connections, 3u);
}

// A proof inside the HELLO (the old, unchecked field) earns nothing: the
// client is challenged, and without an AUTH it is never acknowledged.
TEST_F(Forwarder, ProofInHelloIsNotAdmission) {
  start();
  FrameClient& c = connect(kA);
  c.set_auto_auth(false);
  c.send(header(FrameType::kHello, 3, 0, 0), site_hello_payload(0, 0, {1, 1}, 23));
  const Frame ch = expect(c, FrameType::kChallenge);
  proto::auth::ChallengePayload cp;
  EXPECT_TRUE(proto::auth::decode_challenge(ch.payload, &cp));
  expect_silence(c);
}

// A slot left by BYE is closed for good, even to a holder of the secret.
TEST_F(Forwarder, DepartedRankIsNeverReadmitted) {
  start();
  auto [a, b] = join_pair(5);
  b->send(header(FrameType::kBye, 5, 1, 0));
  ASSERT_TRUE(pump_until(all(), [&] { return !b->link().send_pending(); }));
  drop(*b);
  expect_silence(*a);  // orderly goodbye: no PEER_GONE
  FrameClient& b2 = connect(kB);
  send_hello(b2, 5, 1, 1, 1);
  auto f = next(b2);
  expect_error(f, ErrorCode::kBadHello, 0, 1, 0);
  EXPECT_NE(f->text().find("already left"), std::string::npos) << f->text();
  EXPECT_TRUE(wait_closed(b2));
  expect_silence(*a);
}

// ---- relaying --------------------------------------------------------------

TEST_F(Forwarder, EagerRelayedByteExactBothWays) {
  start();
  auto [a, b] = join_pair(1);
  const std::vector<std::size_t> sizes = {0, 1, 1000, 64u << 10};
  std::uint64_t seq = 0;
  std::uint64_t payload_bytes = 0;
  for (std::size_t n : sizes) {
    SCOPED_TRACE(n);
    // A -> B
    FrameHeader h = eager(1, 0, 1, ++seq, n);
    h.flags = 0x3C;
    const auto data = pattern(seq, n);
    a->send(h, data);
    Frame f = expect(*b, FrameType::kEager);
    h.payload_len = static_cast<std::uint32_t>(n);
    expect_relayed(h, f.hdr);
    EXPECT_EQ(f.payload, data);
    // B -> A
    FrameHeader back = eager(1, 1, 0, ++seq, n);
    back.tag = -5;
    const auto reply = pattern(seq, n);
    b->send(back, reply);
    f = expect(*a, FrameType::kEager);
    back.payload_len = static_cast<std::uint32_t>(n);
    expect_relayed(back, f.hdr);
    EXPECT_EQ(f.payload, reply);
    payload_bytes += 2 * n;
  }
  const auto st = fwd_->stats();
  EXPECT_EQ(st.frames_relayed, 2 * sizes.size());
  EXPECT_EQ(st.bytes_relayed, payload_bytes);
  EXPECT_EQ(st.protocol_errors, 0u);
  EXPECT_GT(st.peak_memory, 0u);
  EXPECT_LE(st.peak_memory, fwd_->config().max_memory);
}

TEST_F(Forwarder, RanksOnTheSameSideReachEachOther) {
  start();
  FrameClient& r0 = join(kA, 2, 0, 2, 1);
  FrameClient& r1 = join(kA, 2, 1, 2, 1);
  FrameClient& r2 = join(kB, 2, 2, 2, 1);
  for (FrameClient* c : {&r0, &r1, &r2}) expect(*c, FrameType::kJobReady);
  const auto data = pattern(9, 300);
  r0.send(eager(2, 0, 1, 1, data.size()), data);
  EXPECT_EQ(expect(r1, FrameType::kEager).payload, data);
  r2.send(eager(2, 2, 1, 1, data.size()), data);
  const Frame f = expect(r1, FrameType::kEager);
  EXPECT_EQ(f.hdr.src, 2u);
  EXPECT_EQ(f.payload, data);
}

TEST_F(Forwarder, RendezvousChunkStreamRelayedByteExact) {
  start();
  auto [a, b] = join_pair(1);
  constexpr std::size_t kMsg = 2u << 20;  // 2 MiB: eight times the credit grant
  const std::size_t chunk = fwd_->config().max_frame;

  FrameHeader rts = header(FrameType::kRts, 1, 0, 1);
  rts.tag = 77;
  rts.seq = 1;
  rts.msg_len = kMsg;
  a->send(rts);
  const Frame got_rts = expect(*b, FrameType::kRts);
  expect_relayed(rts, got_rts.hdr);

  FrameHeader cts = header(FrameType::kCts, 1, 1, 0);
  cts.tag = 77;
  cts.seq = 1;
  cts.msg_len = kMsg;
  b->send(cts);
  const Frame got_cts = expect(*a, FrameType::kCts);
  expect_relayed(cts, got_cts.hdr);

  std::size_t chunks = 0;
  for (std::size_t off = 0; off < kMsg; off += chunk) {
    const std::size_t n = std::min(chunk, kMsg - off);
    FrameHeader h = header(FrameType::kChunk, 1, 0, 1);
    h.tag = 77;
    h.seq = 1;
    h.msg_len = kMsg;
    h.chunk_offset = off;
    std::vector<std::byte> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = pattern_byte(42, off + i);
    send_gated(*a, h, data);
    ++chunks;
  }
  ASSERT_TRUE(pump_until(all(), [&] { return b->inbox().size() == chunks; }))
      << b->inbox().size() << " of " << chunks << " chunks";
  std::size_t expect_off = 0;
  while (auto f = b->pop()) {
    ASSERT_EQ(f->hdr.type, FrameType::kChunk) << describe(*f);
    EXPECT_EQ(f->hdr.chunk_offset, expect_off);
    EXPECT_EQ(f->hdr.msg_len, kMsg);
    EXPECT_EQ(f->hdr.src, 0u);
    EXPECT_EQ(f->hdr.dst, 1u);
    ASSERT_EQ(pattern_mismatch(42, f->payload, expect_off), std::string::npos)
        << "chunk at " << expect_off;
    expect_off += f->payload.size();
  }
  EXPECT_EQ(expect_off, kMsg);
  EXPECT_TRUE(a->inbox().empty()) << describe(a->inbox().front());
  EXPECT_EQ(fwd_->stats().protocol_errors, 0u);
}

// With --splice, payloads of 16 KiB or more between TCP links move by
// splice() through pipes (pipe_pool.h), smaller ones are copied; without it
// all are copied. Four pairs in both directions interleave frames of both kinds; every
// byte and the per-pair order must survive either way.
TEST_F(Forwarder, SplicedAndCopiedPayloadsInterleavedBothWaysByteExact) {
  for (const bool splice : {true, false}) {
    SCOPED_TRACE(splice ? "splice on" : "splice off");
    fwd::Config cfg = base_config();
    cfg.splice = splice;
    start(cfg);
    std::vector<FrameClient*> r;
    for (std::uint32_t v = 0; v < 4; ++v) r.push_back(&join(v < 2 ? kA : kB, 1, v, 2, 2));
    for (FrameClient* c : r) expect(*c, FrameType::kJobReady);
    // Ranks 0, 1 on A and 2, 3 on B; each sends to its partner on the other side.
    const std::uint32_t partner[4] = {2, 3, 0, 1};
    const std::size_t sizes[] = {16384, 16383, 65536, 40007, 1, 20000, 65535, 0};
    constexpr int kRounds = 6;
    std::size_t spliceable = 0, frames = 0;
    for (int round = 0; round < kRounds; ++round)
      for (std::size_t k = 0; k < std::size(sizes); ++k)
        for (std::uint32_t src = 0; src < 4; ++src) {
          const std::uint64_t seq = round * std::size(sizes) + k;
          const std::size_t len = sizes[(k + src) % std::size(sizes)];
          send_gated(*r[src], eager(1, src, partner[src], seq, len),
                     pattern(src * 1000 + seq, len));
          ++frames;
          if (len >= fwd::PipePool::kMinPayload) ++spliceable;
        }
    const std::size_t per_rank = frames / 4;
    ASSERT_TRUE(pump_until(all(), [&] {
      for (FrameClient* c : r)
        if (c->inbox().size() < per_rank) return false;
      return true;
    }));
    for (std::uint32_t dst = 0; dst < 4; ++dst) {
      const std::uint32_t src = partner[dst];
      std::uint64_t seq = 0;
      while (auto got = r[dst]->pop()) {
        ASSERT_EQ(got->hdr.type, FrameType::kEager);
        ASSERT_EQ(got->hdr.src, src);
        ASSERT_EQ(got->hdr.seq, seq) << "order broken from rank " << src << " to " << dst;
        const std::size_t len = sizes[(seq % std::size(sizes) + src) % std::size(sizes)];
        ASSERT_EQ(got->payload.size(), len);
        ASSERT_EQ(pattern_mismatch(src * 1000 + seq, got->payload), std::string::npos)
            << "frame " << seq << " from rank " << src << ", " << len << " bytes";
        ++seq;
      }
      EXPECT_EQ(seq, per_rank);
    }
    const fwd::Stats st = fwd_->stats();
    EXPECT_EQ(st.frames_relayed, frames);
    EXPECT_EQ(st.protocol_errors, 0u);
    if (splice) {
      EXPECT_EQ(st.spliced_frames, spliceable);  // 64 pipes: enough for every frame in flight
    } else {
      EXPECT_EQ(st.spliced_frames, 0u);
    }
    fwd_->stop();
    clients_.clear();
    fwd_.reset();
  }
}

TEST_F(Forwarder, PayloadsQueuedBeyondThePipesAreCopiedInOrder) {
  // The receiver reads nothing at first, so frames pile up in zipperd until
  // its 64 pipes are all taken; the frames behind them are copied. When the
  // receiver reads again, every frame arrives in order with every byte.
  fwd::Config cfg = base_config();
  cfg.conn_credits = 512;
  cfg.max_memory = 64u << 20;
  cfg.splice = true;
  start(cfg);
  auto [a, b] = join_pair(1);
  b->set_paused(true);
  constexpr int kFrames = 400;
  constexpr std::size_t kLen = 60000;  // 24 MB in all: more than the socket buffers take
  for (int i = 0; i < kFrames; ++i)
    send_gated(*a, eager(1, 0, 1, static_cast<std::uint64_t>(i), kLen),
               pattern(static_cast<std::uint64_t>(i), kLen));
  pump_for(all(), milliseconds(200));
  const fwd::Stats mid = fwd_->stats();
  EXPECT_GE(mid.spliced_frames, 64u);
  EXPECT_LT(mid.spliced_frames, static_cast<std::uint64_t>(kFrames)) << "no frame was copied";
  b->set_paused(false);
  ASSERT_TRUE(pump_until(all(), [&] { return b->inbox().size() == kFrames; }))
      << b->inbox().size() << " of " << kFrames;
  for (int i = 0; i < kFrames; ++i) {
    const Frame f = *b->pop();
    ASSERT_EQ(f.hdr.seq, static_cast<std::uint64_t>(i));
    ASSERT_EQ(pattern_mismatch(static_cast<std::uint64_t>(i), f.payload), std::string::npos)
        << "frame " << i;
  }
  EXPECT_EQ(fwd_->stats().protocol_errors, 0u);
}

TEST_F(Forwarder, SplicingToARankThatWentAwayIsAnErrorNotASignal) {
  // splice() into a closed socket raises SIGPIPE unless the relay thread
  // blocks it; this test process does not ignore SIGPIPE, so a raised one
  // would kill it. The sender is told its peer is gone and zipperd serves on.
  fwd::Config cfg = base_config();
  cfg.conn_credits = 256;
  cfg.max_memory = 64u << 20;
  cfg.splice = true;
  start(cfg);
  auto [a, b] = join_pair(1);
  b->set_paused(true);
  const auto data = pattern(4, 60000);
  for (std::uint64_t i = 0; i < 200; ++i) a->send(eager(1, 0, 1, i, data.size()), data);
  pump_for(all(), milliseconds(100));
  EXPECT_GT(fwd_->stats().spliced_frames, 0u);
  drop(*b);  // frames still queued and in pipes for it
  for (std::uint64_t i = 200; i < 220; ++i) a->send(eager(1, 0, 1, i, data.size()), data);
  bool told = false;
  for (int i = 0; i < 400 && !told; ++i) {
    const auto f = next(*a);
    ASSERT_TRUE(f) << "no PEER_GONE";
    told = f->hdr.type == FrameType::kError;
  }
  EXPECT_TRUE(told);
  // zipperd is alive: a new job relays spliced frames byte-exact.
  auto [c, d] = join_pair(2);
  c->send(eager(2, 0, 1, 1, data.size()), data);
  const Frame f = expect(*d, FrameType::kEager);
  EXPECT_EQ(f.payload, data);
}

TEST_F(Forwarder, CreditsAreReturnedSoManyFramesGetThrough) {
  start();
  auto [a, b] = join_pair(1);
  const std::int64_t grant = fwd_->config().conn_credits;
  constexpr int kFrames = 2000;
  constexpr std::size_t kLen = 1000;  // 2000 x 1064 bytes: about 8 grants
  for (int i = 0; i < kFrames; ++i)
    send_gated(*a, eager(1, 0, 1, static_cast<std::uint64_t>(i), kLen),
               pattern(static_cast<std::uint64_t>(i), kLen));
  ASSERT_TRUE(pump_until(all(), [&] { return b->inbox().size() == kFrames; }))
      << b->inbox().size() << " of " << kFrames;
  for (int i = 0; i < kFrames; ++i) {
    const Frame f = *b->pop();
    ASSERT_EQ(f.hdr.type, FrameType::kEager);
    ASSERT_EQ(f.hdr.seq, static_cast<std::uint64_t>(i));
    ASSERT_EQ(pattern_mismatch(static_cast<std::uint64_t>(i), f.payload), std::string::npos);
  }
  const std::uint64_t total_cost = kFrames * proto::credit_cost(kLen);
  EXPECT_GT(total_cost, 4u * static_cast<std::uint64_t>(grant));
  // The sender saw CREDIT frames and was never told off.
  EXPECT_GT(a->credit_frames(), 0u);
  EXPECT_TRUE(a->inbox().empty()) << describe(a->inbox().front());
  // Everything but less than a quarter of the grant comes back on its own
  // (CREDIT frames may still be on their way when b has the data).
  EXPECT_TRUE(pump_until(all(), [&] { return a->credits() >= grant - grant / 4; })) << a->credits();
  EXPECT_LE(a->credits(), grant);
  // The rest rides on the next frames to the client.
  EXPECT_EQ(settle_credit(*a, 0, *b, 1, 1), grant);
  EXPECT_EQ(a->credits_returned(), total_cost);
}

TEST_F(Forwarder, CreditOverrunIsReported) {
  start();
  auto [a, b] = join_pair(1);
  // b never reads, so relayed frames pile up inside zipperd; a ignores its
  // credit and keeps sending until zipperd objects.
  const auto data = pattern(1, fwd_->config().max_frame);
  std::uint64_t seq = 0;
  const auto deadline = Clock::now() + kWait;
  while (a->inbox().empty() && !a->closed() && Clock::now() < deadline) {
    if (a->link().send_queued_bytes() < (1u << 20))
      a->send(eager(1, 0, 1, ++seq, data.size()), data);
    a->pump();
    ::usleep(100);
  }
  ASSERT_FALSE(a->inbox().empty()) << "no error after " << seq << " frames";
  const Frame f = *a->pop();
  ASSERT_EQ(f.hdr.type, FrameType::kError) << describe(f);
  EXPECT_EQ(f.hdr.flags, static_cast<std::uint8_t>(ErrorCode::kCreditOverrun)) << describe(f);
  EXPECT_EQ(f.hdr.src, 0u);
  EXPECT_EQ(f.hdr.dst, 0u);
  EXPECT_EQ(f.hdr.job_id, 1u);
  EXPECT_TRUE(pump_until({a}, [&] { return a->closed(); }));
  // b drains what was relayed, then learns that rank 0 is gone.
  ASSERT_TRUE(pump_until(all(), [&] {
    return !b->inbox().empty() && b->inbox().back().hdr.type == FrameType::kError;
  }));
  const Frame gone = b->inbox().back();
  expect_error(gone, ErrorCode::kPeerGone, 1, 0, 1);
  for (std::size_t i = 0; i + 1 < b->inbox().size(); ++i) {
    ASSERT_EQ(b->inbox()[i].hdr.type, FrameType::kEager);
    ASSERT_EQ(b->inbox()[i].hdr.seq, i + 1);  // in order, none lost before the error
  }
  EXPECT_GE(fwd_->stats().protocol_errors, 1u);
}

TEST_F(Forwarder, SharedPoolParksAndResumes) {
  // Pool buffers for only one connection's credit, shared by two streams
  // whose receivers stall: zipperd must park a sender for lack of a buffer
  // and resume it once a buffer is released.
  fwd::Config cfg = base_config();
  cfg.max_frame = 16u << 10;
  cfg.conn_credits = 2;
  cfg.max_memory = 2 * cfg.max_frame;  // one class of two 16 KiB buffers
  start(cfg);
  auto [a1, b1] = join_pair(1);
  auto [a2, b2] = join_pair(2);
  const std::size_t len = cfg.max_frame;
  const auto cost = static_cast<std::int64_t>(proto::credit_cost(static_cast<std::uint32_t>(len)));
  std::uint64_t sent1 = 0, sent2 = 0;
  auto send_what_credit_allows = [&] {
    bool any = false;
    while (a1->credits() >= cost) {
      a1->send(eager(1, 0, 1, sent1, len), pattern(sent1, len));
      ++sent1;
      any = true;
    }
    while (a2->credits() >= cost) {
      a2->send(eager(2, 0, 1, sent2, len), pattern(1000000 + sent2, len));
      ++sent2;
      any = true;
    }
    return any;
  };
  // Phase 1: b1 and b2 do not read. Send until the socket buffers towards
  // them are full and both senders have been out of credit for a while.
  auto last_send = Clock::now();
  const auto deadline = Clock::now() + kWait;
  while (Clock::now() - last_send < milliseconds(200) || a1->credits() >= cost ||
         a2->credits() >= cost) {
    ASSERT_LT(Clock::now(), deadline) << "senders never stalled: " << sent1 << "/" << sent2;
    if (send_what_credit_allows()) last_send = Clock::now();
    pump_until(
        {a1, a2}, [&] { return a1->credits() >= cost || a2->credits() >= cost; }, milliseconds(20));
  }
  // Both connections' frames are held inside zipperd: the pool is exhausted.
  EXPECT_EQ(fwd_->stats().peak_memory, cfg.max_memory);
  // Phase 2: the receivers drain, memory is released, the parked sender resumes.
  const std::uint64_t total1 = sent1 + 100, total2 = sent2 + 100;
  ASSERT_TRUE(pump_until(
      all(),
      [&] {
        if (sent1 < total1 || sent2 < total2) {
          while (sent1 < total1 && a1->credits() >= cost) {
            a1->send(eager(1, 0, 1, sent1, len), pattern(sent1, len));
            ++sent1;
          }
          while (sent2 < total2 && a2->credits() >= cost) {
            a2->send(eager(2, 0, 1, sent2, len), pattern(1000000 + sent2, len));
            ++sent2;
          }
        }
        return b1->inbox().size() == total1 && b2->inbox().size() == total2;
      },
      milliseconds(15000)))
      << "sent " << sent1 << "/" << sent2 << ", received " << b1->inbox().size() << "/"
      << b2->inbox().size();
  for (std::uint64_t i = 0; i < total1; ++i) {
    const Frame f = *b1->pop();
    ASSERT_EQ(f.hdr.job_id, 1u);
    ASSERT_EQ(f.hdr.seq, i);
    ASSERT_EQ(pattern_mismatch(i, f.payload), std::string::npos);
  }
  for (std::uint64_t i = 0; i < total2; ++i) {
    const Frame f = *b2->pop();
    ASSERT_EQ(f.hdr.job_id, 2u);
    ASSERT_EQ(f.hdr.seq, i);
    ASSERT_EQ(pattern_mismatch(1000000 + i, f.payload), std::string::npos);
  }
  EXPECT_EQ(fwd_->stats().peak_memory, cfg.max_memory);
  EXPECT_EQ(fwd_->stats().protocol_errors, 0u);
}

TEST_F(Forwarder, DeadRanksWithFramesQueuedForEachOtherReleaseEverything) {
  // Ranks 0 and 1 stop reading; ranks 2 and 3 fill zipperd's queues towards
  // them. Then 0 and 1 send to each other (their frames queue behind) and
  // both die. Everything queued for them must be dropped: the live senders
  // get their credit back and can go on talking to each other.
  // Frames of 1 MiB: far more than any slack left in a full socket buffer,
  // so frames for a rank that does not read certainly stay queued in zipperd.
  fwd::Config cfg = base_config();
  cfg.max_frame = 1u << 20;
  cfg.conn_credits = 2;
  cfg.max_memory = 64u << 20;
  start(cfg);
  FrameClient& r0 = join(kA, 1, 0, 2, 2);
  FrameClient& r1 = join(kA, 1, 1, 2, 2);
  FrameClient& r2 = join(kB, 1, 2, 2, 2);
  FrameClient& r3 = join(kB, 1, 3, 2, 2);
  for (FrameClient* c : {&r0, &r1, &r2, &r3}) expect(*c, FrameType::kJobReady);
  const std::size_t len = cfg.max_frame;
  const std::int64_t grant = cfg.conn_credits;
  // Phase 1: 2 -> 0 and 3 -> 1, one frame each (0 and 1 never read). A
  // destination holds at most its credit's worth (2 frames) inside zipperd,
  // so one frame each leaves room for phase 2's.
  r2.send(eager(1, 2, 0, 0, len), pattern(2, len));
  r3.send(eager(1, 3, 1, 0, len), pattern(3, len));
  ASSERT_LT(r2.credits(), grant);
  ASSERT_LT(r3.credits(), grant);
  // Phase 2: 0 and 1 send to each other, then die without BYE.
  for (int i = 0; i < 1; ++i) {
    r0.send(eager(1, 0, 1, static_cast<std::uint64_t>(i), len), pattern(0, len));
    r1.send(eager(1, 1, 0, static_cast<std::uint64_t>(i), len), pattern(1, len));
  }
  // (Only sending: pumping them would read and drain their queues.)
  const auto send_deadline = Clock::now() + kWait;
  while ((r0.link().send_pending() || r1.link().send_pending()) && Clock::now() < send_deadline) {
    r0.progress_send();
    r1.progress_send();
    ::usleep(1000);
  }
  ASSERT_FALSE(r0.link().send_pending() || r1.link().send_pending());
  pump_for({&r2, &r3}, milliseconds(50));  // let zipperd queue those frames
  drop(r0);
  drop(r1);
  // Both survivors hear about both departures...
  int gone2 = 0, gone3 = 0;
  ASSERT_TRUE(pump_until(all(),
                         [&] {
                           for (auto [c, n] : {std::pair{&r2, &gone2}, std::pair{&r3, &gone3}})
                             while (auto f = c->pop()) {
                               if (f->hdr.type == FrameType::kError &&
                                   f->hdr.flags == static_cast<std::uint8_t>(ErrorCode::kPeerGone))
                                 ++*n;
                             }
                           return gone2 == 2 && gone3 == 2;
                         }))
      << gone2 << "/" << gone3;
  // ...and get back the credit of the frames that were stuck for the dead.
  EXPECT_TRUE(pump_until(
      all(),
      [&] { return r2.credits() >= grant - grant / 4 && r3.credits() >= grant - grant / 4; }))
      << "credit never returned: rank 2 has " << r2.credits() << ", rank 3 has " << r3.credits()
      << " of " << grant;
  // They can still talk to each other.
  const auto data = pattern(23, len);
  send_gated(r2, eager(1, 2, 3, 1000, len), data);
  const auto f = next(r3);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->hdr.src, 2u);
  EXPECT_EQ(f->payload, data);
}

// ---- protocol violations -------------------------------------------------

TEST_F(Forwarder, GarbageGetsMalformedErrorWhileOthersKeepWorking) {
  start();
  auto [a1, b1] = join_pair(1);
  auto [a2, b2] = join_pair(2);
  const std::string junk = "GET / HTTP/1.1\r\nHost: zipperd\r\n\r\n" + std::string(64, 'x');
  ASSERT_EQ(::write(a2->fd(), junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  const auto err = next(*a2);
  expect_error(err, ErrorCode::kMalformed, 2, 0, 0);
  EXPECT_NE(err->text().find("bad magic"), std::string::npos) << err->text();
  EXPECT_TRUE(wait_closed(*a2));
  // Its peer learns that rank 0 is gone (closed without BYE).
  expect_error(next(*b2), ErrorCode::kPeerGone, 2, 0, 1);
  // The other job is unaffected, in both directions.
  const auto data = pattern(3, 5000);
  a1->send(eager(1, 0, 1, 1, data.size()), data);
  EXPECT_EQ(expect(*b1, FrameType::kEager).payload, data);
  b1->send(eager(1, 1, 0, 1, data.size()), data);
  EXPECT_EQ(expect(*a1, FrameType::kEager).payload, data);
  EXPECT_GE(fwd_->stats().protocol_errors, 1u);
}

TEST_F(Forwarder, GarbageBeforeHello) {
  start();
  FrameClient& c = connect(kA);
  const std::string junk(100, '\x01');
  ASSERT_EQ(::write(c.fd(), junk.data(), junk.size()), 100);
  expect_error(next(c), ErrorCode::kMalformed, 0, 0, 0);
  EXPECT_TRUE(wait_closed(c));
}

TEST_F(Forwarder, OversizeFrameIsMalformed) {
  start();
  auto [a, b] = join_pair(1);
  const auto data = pattern(1, fwd_->config().max_frame + 1);
  a->send(eager(1, 0, 1, 9, data.size()), data);
  const auto err = next(*a);
  expect_error(err, ErrorCode::kMalformed, 1, 0, 0);
  EXPECT_TRUE(wait_closed(*a));
  expect_error(next(*b), ErrorCode::kPeerGone, 1, 0, 1);
}

TEST_F(Forwarder, HugeHelloIsMalformed) {
  // Before hello only a small payload is accepted (hello plus an auth proof).
  start();
  FrameClient& c = connect(kA);
  c.send(header(FrameType::kHello, 1, 0, 0), site_hello_payload(0, 0, {1, 1}, 8192));
  expect_error(next(c), ErrorCode::kMalformed, 0, 0, 0);
  EXPECT_TRUE(wait_closed(c));
}

TEST_F(Forwarder, DataBeforeHelloIsUnknownJob) {
  start();
  auto [a, b] = join_pair(1);
  FrameClient& c = connect(kA);
  const auto data = pattern(1, 10);
  c.send(eager(1, 0, 1, 55, data.size()), data);
  expect_error(next(c), ErrorCode::kUnknownJob, 0, 0, 0, 55);
  EXPECT_TRUE(wait_closed(c));
  // Nothing reached the job's ranks.
  expect_silence(*b);
  EXPECT_TRUE(a->inbox().empty());
}

TEST_F(Forwarder, SpoofedSourceIsRejected) {
  start();
  FrameClient& r0 = join(kA, 4, 0, 2, 1);
  FrameClient& r1 = join(kA, 4, 1, 2, 1);
  FrameClient& r2 = join(kB, 4, 2, 2, 1);
  for (FrameClient* c : {&r0, &r1, &r2}) expect(*c, FrameType::kJobReady);
  // Rank 0 claims to be rank 1.
  const auto data = pattern(1, 10);
  r0.send(eager(4, 1, 2, 8, data.size()), data);
  expect_error(next(r0), ErrorCode::kUnknownJob, 4, 0, 0, 8);
  EXPECT_TRUE(wait_closed(r0));
  // The destination got no data, only the news that rank 0 left.
  expect_error(next(r2), ErrorCode::kPeerGone, 4, 0, 2);
  expect_error(next(r1), ErrorCode::kPeerGone, 4, 0, 1);
  expect_silence(r2);
}

TEST_F(Forwarder, JobsAreIsolated) {
  // Two jobs with the same layout and ranks on one zipperd.
  start();
  auto [x0, x1] = join_pair(10);
  auto [y0, y1] = join_pair(20);
  const auto dx = pattern(10, 700), dy = pattern(20, 700);
  x0->send(eager(10, 0, 1, 1, dx.size()), dx);
  y0->send(eager(20, 0, 1, 1, dy.size()), dy);
  ASSERT_TRUE(
      pump_until(all(), [&] { return x1->inbox().size() == 1 && y1->inbox().size() == 1; }));
  EXPECT_EQ(x1->inbox()[0].hdr.job_id, 10u);
  EXPECT_EQ(x1->inbox()[0].payload, dx);
  EXPECT_EQ(y1->inbox()[0].hdr.job_id, 20u);
  EXPECT_EQ(y1->inbox()[0].payload, dy);
  x1->pop();
  y1->pop();
  // A rank of job 10 naming job 20 is refused, and nothing reaches job 20.
  x0->send(eager(20, 0, 1, 2, dx.size()), dx);
  expect_error(next(*x0), ErrorCode::kUnknownJob, 10, 0, 0, 2);
  EXPECT_TRUE(wait_closed(*x0));
  expect_error(next(*x1), ErrorCode::kPeerGone, 10, 0, 1);
  expect_silence(*y1);
  EXPECT_TRUE(y0->inbox().empty());
  // Job 20 still works.
  y1->send(eager(20, 1, 0, 3, dy.size()), dy);
  EXPECT_EQ(expect(*y0, FrameType::kEager).payload, dy);
}

TEST_F(Forwarder, BadHelloRankOutOfRange) {
  start();
  FrameClient& c = connect(kA);
  send_hello(c, 1, 2, 1, 1);  // ranks are 0 and 1
  const auto err = next(c);
  expect_error(err, ErrorCode::kBadHello, 0, 2, 0);
  EXPECT_TRUE(wait_closed(c));
}

TEST_F(Forwarder, BadHelloDuplicateRank) {
  start();
  FrameClient& first = join(kA, 1, 0, 1, 1);
  FrameClient& dup = connect(kB);
  send_hello(dup, 1, 0, 1, 1);
  expect_error(next(dup), ErrorCode::kBadHello, 0, 0, 0);
  EXPECT_TRUE(wait_closed(dup));
  // The first rank 0 keeps its place and the job completes normally.
  FrameClient& r1 = join(kB, 1, 1, 1, 1);
  expect(first, FrameType::kJobReady);
  expect(r1, FrameType::kJobReady);
  const auto data = pattern(1, 10);
  r1.send(eager(1, 1, 0, 1, data.size()), data);
  EXPECT_EQ(expect(first, FrameType::kEager).payload, data);
}

TEST_F(Forwarder, BadHelloLayout) {
  start();
  join(kA, 1, 0, 1, 1);
  // Layout disagreeing with the job's.
  FrameClient& c = connect(kB);
  send_hello(c, 1, 1, 1, 2);
  expect_error(next(c), ErrorCode::kBadHello, 0, 1, 0);
  EXPECT_TRUE(wait_closed(c));
  // Empty groups.
  for (auto [x, y] : {std::pair{0u, 1u}, std::pair{1u, 0u}}) {
    FrameClient& e = connect(kA);
    send_hello(e, 99, 0, x, y);
    expect_error(next(e), ErrorCode::kBadHello, 0, 0, 0);
    EXPECT_TRUE(wait_closed(e));
  }
}

TEST_F(Forwarder, BadHelloPayload) {
  start();
  FrameClient& c = connect(kA);
  // auth_len promises more proof than the payload holds.
  std::vector<std::byte> p = site_hello_payload(0, 0, {1, 1}, 4);
  p[16] = std::byte{100};  // auth_len
  c.send(header(FrameType::kHello, 1, 0, 0), p);
  expect_error(next(c), ErrorCode::kBadHello, 0, 0, 0);
  EXPECT_TRUE(wait_closed(c));
}

TEST_F(Forwarder, SecondHelloIsMalformed) {
  start();
  auto [a, b] = join_pair(1);
  send_hello(*a, 1, 0, 1, 1);
  expect_error(next(*a), ErrorCode::kMalformed, 1, 0, 0);
  EXPECT_TRUE(wait_closed(*a));
}

TEST_F(Forwarder, ClientMayNotSendServerFrames) {
  start();
  auto [a, b] = join_pair(1);
  FrameHeader h = header(FrameType::kCredit, 1, 1, 1);
  h.seq = 12;
  b->send(h);
  expect_error(next(*b), ErrorCode::kMalformed, 1, 1, 1, 12);
  EXPECT_TRUE(wait_closed(*b));
  expect_error(next(*a), ErrorCode::kPeerGone, 1, 1, 0);
}

// ---- peers leaving ---------------------------------------------------------

TEST_F(Forwarder, CloseWithoutByeReportsPeerGone) {
  start();
  auto [a, b] = join_pair(1);
  drop(*a);
  const auto err = next(*b);
  expect_error(err, ErrorCode::kPeerGone, 1, 0, 1);
  // Sending to the departed rank is answered with PEER_GONE about it; the
  // sender stays connected.
  const auto data = pattern(1, 100);
  b->send(eager(1, 1, 0, 31, data.size()), data);
  expect_error(next(*b), ErrorCode::kPeerGone, 1, 0, 1, 31);
  EXPECT_FALSE(b->closed());
}

TEST_F(Forwarder, ByeThenCloseIsOrderly) {
  start();
  auto [a, b] = join_pair(1);
  a->send(header(FrameType::kBye, 1, 0, 1));
  ASSERT_TRUE(pump_until(all(), [&] { return !a->link().send_pending(); }));
  pump_for(all(), milliseconds(50));  // let zipperd read the BYE before the close
  drop(*a);
  expect_silence(*b, milliseconds(300));
  EXPECT_EQ(fwd_->stats().protocol_errors, 0u);
  // The rank is gone all the same.
  b->send(eager(1, 1, 0, 2, 0));
  expect_error(next(*b), ErrorCode::kPeerGone, 1, 0, 1, 2);
}

TEST_F(Forwarder, SendingToAnAbsentRankBeforeJobReady) {
  start();
  FrameClient& r0 = join(kA, 1, 0, 1, 1);
  const auto data = pattern(1, 100);
  r0.send(eager(1, 0, 1, 4, data.size()), data);
  expect_error(next(r0), ErrorCode::kPeerGone, 1, 1, 0, 4);
  EXPECT_FALSE(r0.closed());
  // The dropped payload's credit comes back.
  FrameClient& r1 = join(kB, 1, 1, 1, 1);
  expect(r0, FrameType::kJobReady);
  expect(r1, FrameType::kJobReady);
  EXPECT_EQ(settle_credit(r0, 0, r1, 1, 1), static_cast<std::int64_t>(fwd_->config().conn_credits));
}

TEST_F(Forwarder, SilentConnectionIsClosedAfterHelloTimeout) {
  fwd::Config cfg = base_config();
  cfg.hello_timeout_ms = 100;
  start(cfg);
  FrameClient& c = connect(kA);
  EXPECT_TRUE(wait_closed(c, milliseconds(4000)));
  EXPECT_EQ(c.final_status(), proto::LinkStatus::kClosed);
  ASSERT_LE(c.inbox().size(), 1u);  // at most the error saying why
  if (!c.inbox().empty()) {
    EXPECT_EQ(c.inbox().front().hdr.type, FrameType::kError);
  }
  // A client that does say hello is kept.
  join_pair(1);
}

// ---- admission: authentication, isolation, limits -------------------------

// Says HELLO and waits for the CHALLENGE without answering it.
proto::auth::ChallengePayload challenged(FrameClient& c, std::uint64_t job, std::uint32_t vrank,
                                         std::uint32_t np_low, std::uint32_t np_high,
                                         const std::function<Frame(FrameClient&)>& next_of) {
  c.set_auto_auth(false);
  send_hello(c, job, vrank, np_low, np_high);
  const Frame f = next_of(c);
  proto::auth::ChallengePayload ch;
  if (f.hdr.type != FrameType::kChallenge || !proto::auth::decode_challenge(f.payload, &ch))
    throw std::runtime_error("expected a CHALLENGE, got " + describe(f));
  return ch;
}

TEST_F(Forwarder, WrongSecretIsRefused) {
  start();
  auto [a, b] = join_pair(9);
  FrameClient& x = connect(kB);
  const auto ch =
      challenged(x, 9, 1, 1, 1, [&](FrameClient& c) { return expect(c, FrameType::kChallenge); });
  // The attacker knows the job id but not the secret: its own secret names
  // another job, and it cannot take rank 1 of that one either... so it
  // claims the real job's fingerprint with a guessed key.
  auto forged = proto::auth::prove(test_secret(1234), ch, two_site_hello(9, 1, 1, 1),
                                   x.link().local_address(), x.link().remote_address())
                    .auth;
  forged.fingerprint =
      proto::auth::job_fingerprint(proto::auth::job_key(test_secret(9), ch.server_key));
  forged.tag = proto::auth::make_tag(proto::auth::job_key(test_secret(1234), ch.server_key), ch,
                                     forged, two_site_hello(9, 1, 1, 1));
  x.send(header(FrameType::kAuth, 9, 1, 0), proto::auth::encode_auth(forged));
  expect_error(next(x), ErrorCode::kAuth, 0, 1, 0);
  EXPECT_TRUE(wait_closed(x));
  expect_silence(*a);
  expect_silence(*b);
  EXPECT_EQ(fwd_->stats().auth_failures, 1u);
}

TEST_F(Forwarder, ReplayedAuthIsRefused) {
  start();
  FrameClient& r0 = connect(kA);
  send_hello(r0, 4, 0, 1, 1);  // answered automatically
  expect(r0, FrameType::kHelloAck);
  ASSERT_TRUE(r0.challenge().has_value());
  // Everything rank 0 sent, replayed on a new connection: the nonce differs.
  const auto recorded =
      auth_payload(test_secret(4), *r0.challenge(), two_site_hello(4, 0, 1, 1), r0.link());
  FrameClient& x = connect(kA);
  x.set_auto_auth(false);
  send_hello(x, 4, 0, 1, 1);
  expect(x, FrameType::kChallenge);
  x.send(header(FrameType::kAuth, 4, 0, 0), recorded);
  expect_error(next(x), ErrorCode::kAuth, 0, 0, 0);
  EXPECT_TRUE(wait_closed(x));
}

TEST_F(Forwarder, SquattedJobIdIsAnotherJob) {
  start();
  // An outsider registers job id 6 first, with a secret of its own.
  FrameClient& x = connect(kB);
  x.set_auto_auth(false);
  const auto ch =
      challenged(x, 6, 1, 1, 1, [&](FrameClient& c) { return expect(c, FrameType::kChallenge); });
  x.send(header(FrameType::kAuth, 6, 1, 0),
         auth_payload(test_secret(777), ch, two_site_hello(6, 1, 1, 1), x.link()));
  expect(x, FrameType::kHelloAck);
  // The real job still forms, and the outsider cannot reach it.
  auto [a, b] = join_pair(6);
  x.send(eager(6, 1, 0, 1, 4), pattern(1, 4));
  expect_error(next(x), ErrorCode::kPeerGone, 6, 0, 1, 1);
  expect_silence(*a);
  expect_silence(*b);
}

TEST_F(Forwarder, RankMustUseItsGroupsSide) {
  start();
  FrameClient& c = connect(kB);
  send_hello(c, 2, 0, 1, 1);  // rank 0 is in site 0: leg A
  auto f = next(c);
  expect_error(f, ErrorCode::kBadHello, 0, 0, 0);
  EXPECT_NE(f->text().find("rank 0 belongs to site 0, which connects on leg A, not B"),
            std::string::npos)
      << f->text();
  EXPECT_TRUE(wait_closed(c));
  EXPECT_EQ(fwd_->stats().refused_admissions, 1u);
}

TEST_F(Forwarder, LayoutAboveMaxRanksIsRefusedBeforeAuth) {
  fwd::Config cfg = base_config();
  cfg.max_ranks = 64;
  start(cfg);
  FrameClient& c = connect(kA);
  send_hello(c, 2, 0, 33, 32);
  auto f = next(c);
  expect_error(f, ErrorCode::kBadHello, 0, 0, 0);
  EXPECT_NE(f->text().find("--max-ranks"), std::string::npos) << f->text();
  // Beyond the wire's 2^24 ranks the hello itself is refused.
  FrameClient& huge = connect(kA);
  send_hello(huge, 2, 0, 1u << 24, 1u << 24);
  f = next(huge);
  expect_error(f, ErrorCode::kBadHello, 0, 0, 0);
  EXPECT_NE(f->text().find("exceed 16777216"), std::string::npos) << f->text();
  // The largest allowed layout is accepted with one rank connected.
  join(kA, 3, 0, 32, 32);
}

TEST_F(Forwarder, MaxJobsIsEnforced) {
  fwd::Config cfg = base_config();
  cfg.max_jobs = 2;
  start(cfg);
  join(kA, 1, 0, 1, 1);
  join(kA, 2, 0, 1, 1);
  FrameClient& c = connect(kA);
  send_hello(c, 3, 0, 1, 1);
  auto f = next(c);
  expect_error(f, ErrorCode::kBadHello, 0, 0, 0);
  EXPECT_NE(f->text().find("--max-jobs"), std::string::npos) << f->text();
  // A rank of a job already served is still admitted.
  join(kB, 1, 1, 1, 1);
}

TEST_F(Forwarder, HalfReceivedFrameTimesOutAndFreesItsMemory) {
  fwd::Config cfg = base_config();
  cfg.frame_timeout_ms = 300;
  start(cfg);
  auto [a, b] = join_pair(1);
  // A header claiming 60 KiB, then 10 bytes, then nothing.
  auto h = eager(1, 0, 1, 1, 60000);
  h.payload_len = 60000;
  std::array<std::byte, proto::kHeaderSize> wire;
  proto::encode_header(h, wire);
  ASSERT_EQ(::write(a->fd(), wire.data(), wire.size()), static_cast<ssize_t>(wire.size()));
  ASSERT_EQ(::write(a->fd(), wire.data(), 10), 10);
  EXPECT_TRUE(wait_closed(*a, milliseconds(5000)));
  EXPECT_GE(fwd_->stats().timeouts, 1u);
  expect_error(next(*b), ErrorCode::kPeerGone, 1, 0, 1);
}

TEST_F(Forwarder, HalfReceivedSplicedFrameTimesOutAndFreesItsPipe) {
  // As above with splice on: the first 10 bytes went into a pipe, the frame
  // never completes. The connection times out, the pipe (bytes still in it)
  // is closed, and a later frame gets a clean pipe and arrives byte-exact.
  fwd::Config cfg = base_config();
  cfg.frame_timeout_ms = 300;
  cfg.splice = true;
  start(cfg);
  auto [a, b] = join_pair(1);
  auto h = eager(1, 0, 1, 1, 60000);
  h.payload_len = 60000;
  std::array<std::byte, proto::kHeaderSize> wire;
  proto::encode_header(h, wire);
  ASSERT_EQ(::write(a->fd(), wire.data(), wire.size()), static_cast<ssize_t>(wire.size()));
  ASSERT_EQ(::write(a->fd(), wire.data(), 10), 10);
  EXPECT_TRUE(wait_closed(*a, milliseconds(5000)));
  EXPECT_GE(fwd_->stats().timeouts, 1u);
  EXPECT_GE(fwd_->stats().spliced_frames, 1u);
  expect_error(next(*b), ErrorCode::kPeerGone, 1, 0, 1);
  auto [c, d] = join_pair(2);
  const auto data = pattern(8, 60000);
  c->send(eager(2, 0, 1, 1, data.size()), data);
  const Frame f = expect(*d, FrameType::kEager);
  EXPECT_EQ(f.payload, data);
}

TEST_F(Forwarder, RankWhoseJobNeverCompletesTimesOut) {
  fwd::Config cfg = base_config();
  cfg.ready_timeout_ms = 300;
  start(cfg);
  FrameClient& c = join(kA, 8, 0, 1, 1);
  EXPECT_TRUE(wait_closed(c, milliseconds(5000)));
  ASSERT_FALSE(c.inbox().empty());
  EXPECT_EQ(c.inbox().front().hdr.type, FrameType::kError);
  EXPECT_NE(c.inbox().front().text().find("ready timeout"), std::string::npos);
}

TEST_F(Forwarder, OneJobCannotHoldMoreThanItsShareOfMemory) {
  fwd::Config cfg = base_config();
  cfg.max_memory = 1u << 20;  // 1 MiB; floor: two 64 KiB frames
  cfg.conn_credits = 64;
  start(cfg);
  // Job 1's receiver reads nothing, so job 1's frames pile up in zipperd.
  auto [a, b] = join_pair(1);
  b->set_paused(true);
  auto [c, d] = join_pair(2);  // two jobs: a share is 512 KiB each
  const auto data = pattern(5, 60000);
  std::uint64_t seq = 1;
  for (int i = 0; i < 16; ++i) a->send(eager(1, 0, 1, seq++, data.size()), data);
  pump_for(all(), milliseconds(300));
  // Job 2 still gets its messages through at once.
  for (std::uint64_t s2 = 1; s2 <= 8; ++s2) {
    c->send(eager(2, 0, 1, s2, data.size()), data);
    const Frame f = expect(*d, FrameType::kEager);
    EXPECT_EQ(f.payload, data);
  }
}

}  // namespace
