// zipperd at the site boundary, over real sockets: a peer of wire protocol 1
// is refused with one line naming both versions (an old rank at this
// zipperd, and this libmmpi's link meeting an old zipperd's answer), and a
// bridge with three legs (the star) joins a job of three sites: every site
// on its own leg, frames relayed to the leg of the destination rank's site,
// every byte checked.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/forwarder.h"
#include "proto/site_hello.h"
#include "proto/unique_fd.h"
#include "test_util.h"

namespace {

using namespace zipper;
using namespace zipper::test;
using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
namespace fwd = zipper::forwarder;

fwd::Config legs_config(const std::vector<std::string>& names) {
  fwd::Config c;
  std::string why;
  const auto ep = proto::parse_endpoint("tcp:127.0.0.1:0", &why);
  if (!ep) throw std::runtime_error(why);
  for (const auto& n : names) c.listen.push_back({n, *ep});
  c.max_frame = 64u << 10;
  c.conn_credits = 8;
  c.max_memory = 8u << 20;
  return c;
}

std::string describe(const Frame& f) {
  return std::string(proto::to_string(f.hdr.type)) + " src " + std::to_string(f.hdr.src) + " dst " +
         std::to_string(f.hdr.dst) +
         (f.hdr.type == FrameType::kError ? " '" + f.text() + "'" : std::string());
}

class Sites : public ::testing::Test {
 protected:
  void TearDown() override {
    clients_.clear();
    fwd_.reset();
  }
  void start(const fwd::Config& cfg) {
    fwd_ = std::make_unique<fwd::Forwarder>(cfg);
    fwd_->start();
    addrs_ = fwd_->addresses();
  }
  FrameClient& connect(int leg) {
    clients_.push_back(FrameClient::connect(addrs_.at(static_cast<std::size_t>(leg))));
    return *clients_.back();
  }
  std::vector<FrameClient*> all() {
    std::vector<FrameClient*> v;
    for (auto& c : clients_) v.push_back(c.get());
    return v;
  }
  Frame expect(FrameClient& c, FrameType type) {
    auto f = next_frame(c, all());
    if (!f) throw std::runtime_error("timed out waiting for " + std::string(to_string(type)));
    if (f->hdr.type != type)
      throw std::runtime_error("expected " + std::string(to_string(type)) + ", got " +
                               describe(*f));
    return *f;
  }
  /// Rank `vrank` of site `site` of job `job` (table `sites`) on leg `leg`,
  /// admitted.
  FrameClient& join(int leg, std::uint64_t job, std::uint32_t vrank, std::uint32_t site,
                    const std::vector<std::uint32_t>& sites) {
    FrameClient& c = connect(leg);
    send_site_hello(c, job, vrank, site, sites);
    expect(c, FrameType::kHelloAck);
    return c;
  }
  /// The refusal a hello earns on `leg`: its ERROR text (the connection closes).
  std::string refusal(int leg, std::uint64_t job, std::uint32_t vrank, std::uint32_t site,
                      const std::vector<std::uint32_t>& sites) {
    FrameClient& c = connect(leg);
    send_site_hello(c, job, vrank, site, sites);
    const Frame f = expect(c, FrameType::kError);
    EXPECT_EQ(f.hdr.flags, static_cast<std::uint8_t>(ErrorCode::kBadHello)) << describe(f);
    EXPECT_TRUE(pump_until(all(), [&] { return c.closed(); }));
    return f.text();
  }

  std::unique_ptr<fwd::Forwarder> fwd_;
  std::vector<std::string> addrs_;
  std::vector<std::unique_ptr<FrameClient>> clients_;
};

// ---- protocol versions ------------------------------------------------------

proto::UniqueFd tcp_connect(const std::string& address) {
  // "tcp:127.0.0.1:PORT"
  const auto colon = address.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  proto::UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s || ::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("cannot connect to " + address);
  timeval tv{5, 0};  // every read below is bounded
  ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return s;
}

bool read_all(int fd, std::byte* out, std::size_t n) {
  for (std::size_t got = 0; got < n;) {
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

void put_le(std::byte* at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) at[i] = std::byte((v >> (8 * i)) & 0xFF);
}

/// A frame header of protocol `version` (the header's layout is the same in
/// versions 1 and 2; only the version field differs).
std::array<std::byte, proto::kHeaderSize> header_of_version(FrameHeader h, std::uint16_t version) {
  std::array<std::byte, proto::kHeaderSize> b{};
  proto::encode_header(h, b);
  put_le(&b[4], version, 2);
  return b;
}

// A rank of the last release (protocol 1: HELLO of vrank, np_low, np_high,
// auth_len) is answered in its own version, so that it prints the text, and
// the text names both versions; zipperd counts a refusal, no protocol error.
TEST_F(Sites, OldRankIsRefusedNamingBothVersions) {
  start(legs_config({"A", "B"}));
  proto::UniqueFd s = tcp_connect(addrs_[0]);
  FrameHeader h;
  h.type = FrameType::kHello;
  h.job_id = 77;
  h.payload_len = 16;
  const auto hdr = header_of_version(h, 1);
  std::array<std::byte, 16> hello{};
  put_le(&hello[0], 0, 4);  // vrank
  put_le(&hello[4], 1, 4);  // np_low
  put_le(&hello[8], 1, 4);  // np_high
  ASSERT_EQ(::send(s.get(), hdr.data(), hdr.size(), MSG_NOSIGNAL), 64);
  ASSERT_EQ(::send(s.get(), hello.data(), hello.size(), MSG_NOSIGNAL), 16);

  std::array<std::byte, proto::kHeaderSize> got{};
  ASSERT_TRUE(read_all(s.get(), got.data(), got.size())) << "no answer to an old HELLO";
  EXPECT_EQ(std::to_integer<int>(got[4]) | std::to_integer<int>(got[5]) << 8, 1)
      << "the answer is in the old rank's version";
  put_le(&got[4], proto::kVersion, 2);  // the same layout: decode it as ours
  FrameHeader ans;
  ASSERT_EQ(proto::decode_header(got, 4096, &ans), proto::DecodeError::kOk);
  EXPECT_EQ(ans.type, FrameType::kError);
  EXPECT_EQ(ans.flags, static_cast<std::uint8_t>(ErrorCode::kBadHello));
  std::string text(ans.payload_len, '\0');
  ASSERT_TRUE(read_all(s.get(), reinterpret_cast<std::byte*>(text.data()), text.size()));
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(text.rfind("zipperd at 127.0.0.1:", 0), 0u) << text;
  EXPECT_NE(text.find(" speaks zipper protocol version 2, this libmmpi speaks 1: run libmmpi and "
                      "zipperd of the same release"),
            std::string::npos)
      << text;
  // Then the connection ends.
  std::byte more{};
  EXPECT_EQ(::recv(s.get(), &more, 1, 0), 0);
  EXPECT_EQ(fwd_->stats().refused_admissions, 1u);
  EXPECT_EQ(fwd_->stats().protocol_errors, 0u);
}

// An admitted rank whose header changes version breaks the protocol: closed
// as malformed, counted as a protocol error, not as a refused admission.
TEST_F(Sites, VersionChangeAfterAdmissionIsAProtocolError) {
  start(legs_config({"A", "B"}));
  FrameClient& a = join(0, 4, 0, 0, {1, 1});
  FrameClient& b = join(1, 4, 1, 1, {1, 1});
  expect(a, FrameType::kJobReady);
  expect(b, FrameType::kJobReady);
  FrameHeader h;
  h.version = 1;
  h.type = FrameType::kEager;
  h.job_id = 4;
  h.src = 0;
  h.dst = 1;
  a.send(h);
  const Frame e = expect(a, FrameType::kError);
  EXPECT_EQ(e.hdr.flags, static_cast<std::uint8_t>(ErrorCode::kMalformed)) << describe(e);
  EXPECT_TRUE(pump_until(all(), [&] { return a.closed(); }));
  EXPECT_EQ(fwd_->stats().protocol_errors, 1u);
  EXPECT_EQ(fwd_->stats().refused_admissions, 0u);
}

// This release's link meeting an old zipperd: the old zipperd answers the
// HELLO (a version it cannot decode) with an ERROR in version 1 and closes.
// The link names the peer's version, from which libmmpi's one line is made.
TEST_F(Sites, OldZipperdsAnswerIsAVersionMismatch) {
  proto::UniqueFd l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(l.get(), 1), 0);
  ASSERT_EQ(::getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string address = "tcp:127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  std::thread old_zipperd([&] {
    proto::UniqueFd c(::accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC));
    std::array<std::byte, proto::kHeaderSize> hello{};
    if (!c || !read_all(c.get(), hello.data(), hello.size())) return;
    const std::string text = "malformed frame from tcp:127.0.0.1:1: unsupported protocol version";
    FrameHeader e;
    e.type = FrameType::kError;
    e.flags = static_cast<std::uint8_t>(ErrorCode::kMalformed);
    e.payload_len = static_cast<std::uint32_t>(text.size());
    const auto hdr = header_of_version(e, 1);
    ::send(c.get(), hdr.data(), hdr.size(), MSG_NOSIGNAL);
    ::send(c.get(), text.data(), text.size(), MSG_NOSIGNAL);
  });
  std::string why;
  auto link = proto::connect(*proto::parse_endpoint(address, &why), 2000);
  FrameHeader h;
  h.type = FrameType::kHello;
  link->post({h, make_payload(site_hello_payload(0, 0, {1, 1})), {}});
  struct Sink : proto::RecvSink {
    std::optional<proto::Payload> payload_dest(const FrameHeader& f) override {
      return proto::Payload::allocate(f.payload_len);
    }
    void on_frame(const FrameHeader&, proto::Payload) override { ++frames; }
    int frames = 0;
  } sink;
  proto::LinkStatus st = proto::LinkStatus::kOk;
  const auto deadline = Clock::now() + kWait;
  while (st == proto::LinkStatus::kOk && Clock::now() < deadline) {
    link->progress_send();
    st = link->progress_recv(sink, 0);
    std::this_thread::sleep_for(milliseconds(5));
  }
  old_zipperd.join();
  ASSERT_EQ(st, proto::LinkStatus::kError);
  EXPECT_EQ(sink.frames, 0);
  const proto::LinkError e = link->last_error();
  EXPECT_EQ(e.kind, proto::LinkErrorKind::kVersionMismatch);
  EXPECT_EQ(e.peer_version, 1u);
  EXPECT_EQ(
      proto::version_mismatch(e.peer_version, proto::kVersion, "zipperd at " + address, "libmmpi"),
      "zipperd at " + address +
          " speaks zipper protocol version 1, this libmmpi speaks 2: run libmmpi and "
          "zipperd of the same release");
}

// ---- the star: one bridge, a leg per site ----------------------------------

// Job {2, 1, 2}: ranks 0-1 in site 0 (leg A), 2 in site 1 (B), 3-4 in site 2
// (C). Every rank sends a message to every rank of the other sites; each
// arrives whole, from its sender, on the leg of the receiver's site.
TEST_F(Sites, StarRelaysBetweenThreeSites) {
  start(legs_config({"A", "B", "C"}));
  const std::vector<std::uint32_t> sites = {2, 1, 2};
  const std::vector<std::uint32_t> site_of = {0, 0, 1, 2, 2};
  std::vector<FrameClient*> rank;
  for (std::uint32_t r = 0; r < 5; ++r)
    rank.push_back(&join(static_cast<int>(site_of[r]), 9, r, site_of[r], sites));
  for (FrameClient* c : rank) expect(*c, FrameType::kJobReady);
  std::size_t expected = 0;
  for (std::uint32_t src = 0; src < 5; ++src)
    for (std::uint32_t dst = 0; dst < 5; ++dst) {
      if (site_of[src] == site_of[dst]) continue;
      const auto data = pattern(src * 10 + dst, 1000 + 97 * dst);
      FrameHeader h;
      h.type = FrameType::kEager;
      h.job_id = 9;
      h.src = src;
      h.dst = dst;
      h.tag = static_cast<std::int32_t>(src);
      h.msg_len = data.size();
      rank[src]->send(h, data);
      ++expected;
    }
  std::size_t got = 0;
  for (std::uint32_t dst = 0; dst < 5; ++dst) {
    const std::size_t from = dst < 2 ? 3 : dst == 2 ? 4 : 3;  // ranks of the other sites
    for (std::size_t i = 0; i < from; ++i) {
      const Frame f = expect(*rank[dst], FrameType::kEager);
      ASSERT_EQ(f.hdr.dst, dst);
      ASSERT_NE(site_of[f.hdr.src], site_of[dst]);
      EXPECT_EQ(f.hdr.tag, static_cast<std::int32_t>(f.hdr.src));
      EXPECT_EQ(f.payload.size(), 1000 + 97 * dst);
      EXPECT_EQ(pattern_mismatch(f.hdr.src * 10 + dst, f.payload), std::string::npos)
          << "from rank " << f.hdr.src << " to " << dst;
      ++got;
    }
  }
  EXPECT_EQ(got, expected);
  // The job's traffic by sending site: site 0's ranks sent 3 messages each.
  const fwd::Snapshot snap = fwd_->snapshot();
  ASSERT_EQ(snap.jobs.size(), 1u);
  EXPECT_EQ(snap.jobs[0].sites, sites);
  ASSERT_EQ(snap.jobs[0].from_site.size(), 3u);
  EXPECT_EQ(snap.jobs[0].from_site[0].frames, 6u);
  EXPECT_EQ(snap.jobs[0].from_site[1].frames, 4u);
  EXPECT_EQ(snap.jobs[0].from_site[2].frames, 6u);
  std::uint64_t site1_bytes = 0;
  for (std::uint32_t dst : {0u, 1u, 3u, 4u}) site1_bytes += 1000 + 97 * dst;
  EXPECT_EQ(snap.jobs[0].from_site[1].bytes, site1_bytes);
  // The star's routes: every site a local leg, one hop; traffic by
  // destination site (site 1's one rank heard from the four others).
  EXPECT_EQ(snap.bridge, "A|B|C");
  ASSERT_EQ(snap.routes.size(), 3u);
  for (const auto& r : snap.routes) {
    EXPECT_EQ(r.hops, 1u);
    EXPECT_EQ(r.next_hops, std::vector<std::string>{"leg " + r.site});
  }
  EXPECT_EQ(snap.routes[1].sent.frames, 4u);
  EXPECT_EQ(snap.routes[1].sent.bytes, 4u * (1000 + 97 * 2));

  // A rank outside the job's sites has no route.
  FrameHeader lost;
  lost.type = FrameType::kEager;
  lost.job_id = 9;
  lost.src = 2;
  lost.dst = 5;
  lost.seq = 3;
  rank[2]->send(lost);
  const Frame e = expect(*rank[2], FrameType::kError);
  EXPECT_EQ(e.hdr.flags, static_cast<std::uint8_t>(ErrorCode::kPeerGone));
  EXPECT_EQ(e.text(), "rank 5 is outside the job's 5 ranks");
}

// Each site on its own leg; a bridge joins at most as many sites as it has
// legs (fewer use the first legs).
TEST_F(Sites, StarAdmitsEachSiteOnItsLegOnly) {
  start(legs_config({"A", "B", "C"}));
  EXPECT_EQ(refusal(1, 5, 4, 2, {2, 2, 2}),
            "rank 4 belongs to site 2, which connects on leg C, not B");
  EXPECT_EQ(refusal(2, 6, 0, 0, {1, 1, 1, 1}), "this zipperd joins 3 sites; the job declares 4");
  EXPECT_EQ(fwd_->stats().refused_admissions, 2u);
  // A job of two sites uses legs A and B.
  FrameClient& a = join(0, 7, 0, 0, {1, 1});
  FrameClient& b = join(1, 7, 1, 1, {1, 1});
  expect(a, FrameType::kJobReady);
  expect(b, FrameType::kJobReady);
  const auto data = pattern(7, 300);
  FrameHeader h;
  h.type = FrameType::kEager;
  h.job_id = 7;
  h.src = 1;
  h.dst = 0;
  h.msg_len = data.size();
  b.send(h, data);
  EXPECT_EQ(expect(a, FrameType::kEager).payload, data);
}

// MMPI_Abort in one site reaches the ranks of every other site, and not the
// aborting rank's own site (its native MPI_Abort ends it).
TEST_F(Sites, AbortReachesEveryOtherSite) {
  start(legs_config({"A", "B", "C"}));
  const std::vector<std::uint32_t> sites = {2, 1, 1};
  std::vector<FrameClient*> rank = {&join(0, 3, 0, 0, sites), &join(0, 3, 1, 0, sites),
                                    &join(1, 3, 2, 1, sites), &join(2, 3, 3, 2, sites)};
  for (FrameClient* c : rank) expect(*c, FrameType::kJobReady);
  FrameHeader h;
  h.type = FrameType::kAbort;
  h.job_id = 3;
  h.src = 0;
  h.tag = 42;
  rank[0]->send(h);
  for (int r : {2, 3}) {
    const Frame f = expect(*rank[static_cast<std::size_t>(r)], FrameType::kAbort);
    EXPECT_EQ(f.hdr.src, 0u);
    EXPECT_EQ(f.hdr.tag, 42);
  }
  pump_for(all(), milliseconds(150));
  EXPECT_TRUE(rank[1]->inbox().empty()) << describe(rank[1]->inbox().front());
}

// A bridge of a chain (A - B - C: this one B|C, peered with A|B over site
// B): legs follow --site-names, not listener order; a site behind the peer
// is refused with its route (this zipperd does not relay to other bridges
// yet), a site no bridge joins with the route table's one line.
TEST_F(Sites, ChainBridgeAdmitsByRoute) {
  fwd::Config c = legs_config({"C", "B"});  // listener 0 is the leg of site C
  c.site_names = {"A", "B", "C", "D"};
  std::string why;
  auto peer = fwd::parse_peer("A|B=127.0.0.1:1", &why);
  ASSERT_TRUE(peer) << why;
  peer->host_key = proto::auth::Key{};
  c.peers.push_back(*peer);
  start(c);
  EXPECT_EQ(refusal(1, 6, 1, 1, {1, 1, 1}),
            "site A is 2 bridges away (over bridge A|B over site B), and this zipperd does not "
            "relay frames to other bridges yet");
  EXPECT_EQ(refusal(1, 6, 1, 1, {1, 1, 1, 1}),
            "site A is 2 bridges away (over bridge A|B over site B), and this zipperd does not "
            "relay frames to other bridges yet");
  const fwd::Snapshot snap = fwd_->snapshot();
  EXPECT_EQ(snap.bridge, "C|B");
  ASSERT_EQ(snap.routes.size(), 3u) << "no route to D";
  EXPECT_EQ(snap.routes[0].site, "A");
  EXPECT_EQ(snap.routes[0].hops, 2u);
  EXPECT_EQ(snap.routes[0].next_hops, std::vector<std::string>{"bridge A|B over site B"});
  EXPECT_EQ(snap.routes[2].next_hops, std::vector<std::string>{"leg C"});
}

// --site-names decides which listener is a site's leg, not listener order.
TEST_F(Sites, SiteNamesPickTheLeg) {
  fwd::Config c = legs_config({"C", "B"});
  c.site_names = {"B", "C"};
  start(c);
  EXPECT_EQ(refusal(0, 5, 0, 0, {1, 1}),
            "rank 0 belongs to site 0, which connects on leg B, not C");
  FrameClient& b = join(1, 6, 0, 0, {1, 1});
  FrameClient& cc = join(0, 6, 1, 1, {1, 1});
  expect(b, FrameType::kJobReady);
  expect(cc, FrameType::kJobReady);
  const auto data = pattern(6, 500);
  FrameHeader h;
  h.type = FrameType::kEager;
  h.job_id = 6;
  h.src = 1;
  h.dst = 0;
  h.msg_len = data.size();
  cc.send(h, data);
  EXPECT_EQ(expect(b, FrameType::kEager).payload, data);
  const fwd::Snapshot snap = fwd_->snapshot();
  ASSERT_EQ(snap.routes.size(), 2u);
  EXPECT_EQ(snap.routes[0].site, "B");
  EXPECT_EQ(snap.routes[0].sent.bytes, 500u);
  EXPECT_EQ(snap.routes[1].sent.bytes, 0u);
}

TEST_F(Sites, NoRouteIsRefusedWithOneLine) {
  fwd::Config c = legs_config({"B", "C"});
  c.site_names = {"D", "A", "B", "C"};  // no bridge joins D
  std::string why;
  auto peer = fwd::parse_peer("A|B=127.0.0.1:1", &why);
  ASSERT_TRUE(peer) << why;
  peer->host_key = proto::auth::Key{};
  c.peers.push_back(*peer);
  auto stray = fwd::parse_peer("B|E", &why);  // names no site: refused at construction
  ASSERT_TRUE(stray) << why;
  c.peers.push_back(*stray);
  EXPECT_THROW(fwd::Forwarder{c}, std::invalid_argument);
  c.peers.pop_back();
  start(c);
  EXPECT_EQ(refusal(0, 8, 2, 2, {1, 1, 1, 1}),
            "no route from bridge B|C to site D: no bridge in the configuration has a leg on it");
  EXPECT_EQ(fwd_->stats().refused_admissions, 1u);
}

}  // namespace
