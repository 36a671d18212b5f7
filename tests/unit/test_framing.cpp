// The framing path both links share: the frame assembler (byte splits,
// pause/resume, direct payload writes, typed errors), the send queue's urgent
// rule, the owning fd, typed errors of the TCP link, and long-lived regions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/frame_assembler.h"
#include "proto/memory_regions.h"
#include "proto/send_queue.h"
#include "proto/tcp/tcp_link.h"
#include "proto/unique_fd.h"

namespace {

using namespace zipper::proto;
using Outcome = FrameAssembler::Outcome;

FrameHeader make_header(std::uint64_t seq, std::uint32_t len) {
  FrameHeader h;
  h.type = FrameType::kEager;
  h.job_id = 7;
  h.src = 1;
  h.dst = 2;
  h.seq = seq;
  h.tag = static_cast<std::int32_t>(seq);
  h.payload_len = len;
  h.msg_len = len;
  return h;
}

std::byte pattern(std::uint64_t seq, std::size_t i) {
  return static_cast<std::byte>((seq * 131 + i * 7) & 0xFF);
}

/// Encodes frames of the given payload sizes (payload bytes from pattern()).
std::vector<std::byte> stream_of(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::byte> out;
  for (std::size_t f = 0; f < sizes.size(); ++f) {
    std::array<std::byte, kHeaderSize> h{};
    encode_header(make_header(f, sizes[f]), h);
    out.insert(out.end(), h.begin(), h.end());
    for (std::size_t i = 0; i < sizes[f]; ++i) out.push_back(pattern(f, i));
  }
  return out;
}

/// Collects frames; refuses a destination while `refuse` > 0 (counting down).
class Collector final : public RecvSink {
 public:
  std::optional<Payload> payload_dest(const FrameHeader& h) override {
    ++asked;
    if (refuse > 0) {
      --refuse;
      return std::nullopt;
    }
    return Payload::allocate(wrong_size ? h.payload_len + 1 : h.payload_len);
  }
  void on_frame(const FrameHeader& h, Payload p) override {
    headers.push_back(h);
    payloads.emplace_back(p.bytes.begin(), p.bytes.end());
  }
  void expect_frames(const std::vector<std::uint32_t>& sizes) const {
    ASSERT_EQ(headers.size(), sizes.size());
    for (std::size_t f = 0; f < sizes.size(); ++f) {
      EXPECT_EQ(headers[f].seq, f);
      ASSERT_EQ(payloads[f].size(), sizes[f]);
      for (std::size_t i = 0; i < sizes[f]; ++i)
        ASSERT_EQ(payloads[f][i], pattern(f, i)) << "frame " << f << " byte " << i;
    }
  }
  int refuse = 0;
  int asked = 0;
  bool wrong_size = false;
  std::vector<FrameHeader> headers;
  std::vector<std::vector<std::byte>> payloads;
};

const std::vector<std::uint32_t> kSizes{0, 1, 63, 64, 65, 300, 0, 2000};

TEST(FrameAssembler, FramesSplitAtEveryByteBoundary) {
  const auto s = stream_of(kSizes);
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    FrameAssembler a("test");
    Collector c;
    const std::span<const std::byte> all(s);
    auto r1 = a.feed(all.first(cut), c);
    ASSERT_EQ(r1.outcome, Outcome::kNeedMore) << "cut " << cut;
    ASSERT_EQ(r1.consumed, cut);
    auto r2 = a.feed(all.subspan(cut), c);
    ASSERT_EQ(r2.outcome, Outcome::kNeedMore) << "cut " << cut;
    ASSERT_EQ(r1.frames + r2.frames, kSizes.size());
    EXPECT_TRUE(a.at_boundary());
    c.expect_frames(kSizes);
  }
}

TEST(FrameAssembler, ByteByByte) {
  const auto s = stream_of(kSizes);
  FrameAssembler a("test");
  Collector c;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto r = a.feed(std::span<const std::byte>(&s[i], 1), c);
    ASSERT_EQ(r.outcome, Outcome::kNeedMore);
    ASSERT_EQ(r.consumed, 1u);
  }
  c.expect_frames(kSizes);
}

TEST(FrameAssembler, PauseKeepsTheHeaderAndResumesWithoutInput) {
  const std::vector<std::uint32_t> sizes{10, 500, 3};
  const auto s = stream_of(sizes);
  FrameAssembler a("test");
  Collector c;
  c.refuse = 0;
  // First frame goes through; refuse the second's destination twice.
  auto r = a.feed(std::span<const std::byte>(s).first(kHeaderSize + 10), c);
  ASSERT_EQ(r.frames, 1u);
  c.refuse = 2;
  const std::span<const std::byte> rest = std::span<const std::byte>(s).subspan(kHeaderSize + 10);
  r = a.feed(rest, c);
  EXPECT_EQ(r.outcome, Outcome::kPaused);
  EXPECT_EQ(r.consumed, kHeaderSize);  // the header is taken, its payload is not
  EXPECT_TRUE(a.awaiting_dest());
  EXPECT_EQ(a.header().seq, 1u);
  r = a.feed({}, c);  // retried with no input
  EXPECT_EQ(r.outcome, Outcome::kPaused);
  EXPECT_EQ(r.consumed, 0u);
  r = a.feed(rest.subspan(kHeaderSize), c);
  EXPECT_EQ(r.outcome, Outcome::kNeedMore);
  EXPECT_EQ(r.frames, 2u);
  c.expect_frames(sizes);
  EXPECT_EQ(c.asked, 5);  // 1 + 2 refused + 1 granted + 1
}

TEST(FrameAssembler, FrameLimitLeavesTheRestOfTheInput) {
  const std::vector<std::uint32_t> sizes{5, 6, 7};
  const auto s = stream_of(sizes);
  FrameAssembler a("test");
  Collector c;
  auto r = a.feed(s, c, 2);
  EXPECT_EQ(r.outcome, Outcome::kLimit);
  EXPECT_EQ(r.frames, 2u);
  EXPECT_EQ(r.consumed, 2 * kHeaderSize + 11);
  r = a.feed(std::span<const std::byte>(s).subspan(r.consumed), c, 2);
  EXPECT_EQ(r.frames, 1u);
  c.expect_frames(sizes);
}

TEST(FrameAssembler, DirectPayloadWritesCompleteTheFrame) {
  const std::vector<std::uint32_t> sizes{4096, 8};
  const auto s = stream_of(sizes);
  FrameAssembler a("test");
  Collector c;
  auto r = a.feed(std::span<const std::byte>(s).first(kHeaderSize + 100), c);
  ASSERT_EQ(r.outcome, Outcome::kNeedMore);
  auto dest = a.direct_span();
  ASSERT_EQ(dest.size(), 4096u - 100);
  // The transport writes the rest itself (readv, RDMA WRITE), in two parts.
  std::memcpy(dest.data(), s.data() + kHeaderSize + 100, 1000);
  EXPECT_FALSE(a.direct_received(1000, c));
  dest = a.direct_span();
  ASSERT_EQ(dest.size(), 4096u - 1100);
  std::memcpy(dest.data(), s.data() + kHeaderSize + 1100, dest.size());
  EXPECT_TRUE(a.direct_received(dest.size(), c));
  EXPECT_TRUE(a.direct_span().empty());
  EXPECT_EQ(a.last_payload_len(), 4096u);
  r = a.feed(std::span<const std::byte>(s).subspan(kHeaderSize + 4096), c);
  EXPECT_EQ(r.frames, 1u);
  c.expect_frames(sizes);
}

TEST(FrameAssembler, MalformedHeaderIsATypedErrorAndSticks) {
  auto s = stream_of({10});
  s[0] = std::byte{0x00};  // magic
  FrameAssembler a("tcp:peer:1");
  Collector c;
  auto r = a.feed(s, c);
  EXPECT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(a.error().kind, LinkErrorKind::kMalformed);
  EXPECT_EQ(a.error().message.rfind("malformed frame from tcp:peer:1: ", 0), 0u)
      << a.error().message;
  EXPECT_NE(a.error().message.find("bad magic"), std::string::npos) << a.error().message;
  EXPECT_EQ(c.asked, 0);
  EXPECT_EQ(a.feed(stream_of({1}), c).outcome, Outcome::kError);  // refuses further input
}

TEST(FrameAssembler, OversizeAndSplitBadHeaderAreMalformed) {
  FrameAssembler a("p");
  a.set_max_payload(100);
  Collector c;
  const auto s = stream_of({101});
  // Split inside the header: the header is gathered, then refused.
  EXPECT_EQ(a.feed(std::span<const std::byte>(s).first(30), c).outcome, Outcome::kNeedMore);
  EXPECT_EQ(a.header_bytes(), 30u);
  EXPECT_EQ(a.feed(std::span<const std::byte>(s).subspan(30), c).outcome, Outcome::kError);
  EXPECT_EQ(a.error().kind, LinkErrorKind::kMalformed);
}

TEST(FrameAssembler, TruncatedStreamIsVisibleAtTheEnd) {
  const auto s = stream_of({1000});
  for (std::size_t cut : {std::size_t{1}, kHeaderSize - 1, kHeaderSize, kHeaderSize + 999}) {
    FrameAssembler a("p");
    Collector c;
    a.feed(std::span<const std::byte>(s).first(cut), c);
    EXPECT_FALSE(a.at_boundary()) << cut;  // the link reports kTruncated on EOF here
    EXPECT_TRUE(c.headers.empty());
  }
}

TEST(FrameAssembler, WrongSizeDestinationIsInternal) {
  FrameAssembler a("p");
  Collector c;
  c.wrong_size = true;
  EXPECT_EQ(a.feed(stream_of({5}), c).outcome, Outcome::kError);
  EXPECT_EQ(a.error().kind, LinkErrorKind::kInternal);
}

// ------------------------------------------------------------------ send queue

OutFrame out(std::uint64_t seq, bool urgent, std::size_t len = 0) {
  OutFrame f;
  f.hdr = make_header(seq, static_cast<std::uint32_t>(len));
  f.payload = Payload::allocate(len);
  f.urgent = urgent;
  return f;
}

std::vector<std::uint64_t> order(const SendQueue<>& q) {
  std::vector<std::uint64_t> v;
  for (const auto& e : q) v.push_back(e.frame.hdr.seq);
  return v;
}

TEST(SendQueue, DataKeepsOrderUrgentOvertakesOnlyFramesNotStarted) {
  SendQueue<> q;
  q.push(out(1, false, 100));
  q.push(out(2, false, 100));
  q.push(out(3, false));
  EXPECT_EQ(order(q), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(q.queued_bytes(), 3 * kHeaderSize + 200);
  // Frame 1 is started (bytes handed to the transport): never interleaved.
  q.handed(q.front(), 10);
  q.push(out(10, true));
  q.push(out(11, true));  // in order among urgent frames
  EXPECT_EQ(order(q), (std::vector<std::uint64_t>{1, 10, 11, 2, 3}));
  q.push(out(4, false));  // data still goes last
  EXPECT_EQ(order(q), (std::vector<std::uint64_t>{1, 10, 11, 2, 3, 4}));
  EXPECT_EQ(q.queued_bytes(), 6 * kHeaderSize + 200 - 10);
}

TEST(SendQueue, UrgentGoesFirstOnAnIdleQueueAndBehindStartedUrgent) {
  SendQueue<> q;
  q.push(out(1, false));
  q.push(out(10, true));
  EXPECT_EQ(order(q), (std::vector<std::uint64_t>{10, 1}));
  q.handed(q.front(), 1);  // the urgent frame is on its way
  q.push(out(11, true));
  EXPECT_EQ(order(q), (std::vector<std::uint64_t>{10, 11, 1}));
}

TEST(SendQueue, EncodeRunsTheHookOnceAndDroppedFramesCountAsHanded) {
  SendQueue<> q;
  q.push(out(1, false, 5));
  q.push(out(2, false, 5));
  int calls = 0;
  HeaderHook hook = [&](FrameHeader& h) {
    ++calls;
    h.credits = 9;
    return h.seq != 2;  // drop frame 2
  };
  auto it = q.begin();
  EXPECT_TRUE(q.encode(*it, hook));
  EXPECT_TRUE(q.encode(*it, hook));  // not again
  EXPECT_EQ(calls, 1);
  FrameHeader back;
  ASSERT_EQ(decode_header(it->wire, kMaxPayloadLimit, &back), DecodeError::kOk);
  EXPECT_EQ(back.credits, 9u);
  EXPECT_EQ(back.payload_len, 5u);
  ++it;
  EXPECT_FALSE(q.encode(*it, hook));
  EXPECT_TRUE(it->all_handed());
  EXPECT_EQ(q.queued_bytes(), kHeaderSize + 5);
  EXPECT_FALSE(q.all_handed());
}

// ------------------------------------------------------------------ fd, errors

TEST(UniqueFd, ClosesOnceAndMoves) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  {
    UniqueFd a(sv[0]);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(b.get(), sv[0]);
    UniqueFd c;
    c = std::move(b);
    EXPECT_EQ(c.get(), sv[0]);
  }
  EXPECT_EQ(::fcntl(sv[0], F_GETFD), -1);  // closed by c
  EXPECT_EQ(errno, EBADF);
  UniqueFd d(sv[1]);
  EXPECT_EQ(d.release(), sv[1]);
  EXPECT_EQ(::close(sv[1]), 0);  // release() gave it up
}

TEST(LinkError, KindFromErrno) {
  EXPECT_EQ(LinkError::from_errno("sendmsg", EPIPE).kind, LinkErrorKind::kPeerClosed);
  EXPECT_EQ(LinkError::from_errno("read", ECONNRESET).kind, LinkErrorKind::kPeerClosed);
  EXPECT_EQ(LinkError::from_errno("connect", ECONNREFUSED).kind, LinkErrorKind::kRefused);
  EXPECT_EQ(LinkError::from_errno("connect", ETIMEDOUT).kind, LinkErrorKind::kTimeout);
  const auto e = LinkError::from_errno("read", EIO);
  EXPECT_EQ(e.kind, LinkErrorKind::kSystem);
  EXPECT_EQ(e.sys_errno, EIO);
  EXPECT_EQ(e.message, std::string("read: ") + std::strerror(EIO));
}

/// A TCP link over one end of a socketpair; the test writes the other end.
struct RawPair {
  std::unique_ptr<Link> link;
  UniqueFd other;
  RawPair() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) throw std::runtime_error("socketpair");
    link = std::make_unique<tcp::TcpLink>(UniqueFd(sv[0]), "raw");
    other.reset(sv[1]);
  }
  void write(std::span<const std::byte> b) {
    ASSERT_EQ(::write(other.get(), b.data(), b.size()), static_cast<ssize_t>(b.size()));
  }
};

TEST(TcpLinkErrors, TruncatedMalformedAndCleanCloseAreTyped) {
  {
    RawPair p;
    const auto s = stream_of({100, 50000});
    p.write(std::span<const std::byte>(s).first(s.size() - 7));
    p.other.reset();
    Collector c;
    EXPECT_EQ(p.link->progress_recv(c, 0), LinkStatus::kError);
    EXPECT_EQ(p.link->last_error().kind, LinkErrorKind::kTruncated);
    EXPECT_EQ(c.headers.size(), 1u);
  }
  {
    RawPair p;
    auto s = stream_of({3});
    s[6] = std::byte{0x7F};  // frame type
    p.write(s);
    Collector c;
    EXPECT_EQ(p.link->progress_recv(c, 0), LinkStatus::kError);
    EXPECT_EQ(p.link->last_error().kind, LinkErrorKind::kMalformed);
    EXPECT_EQ(p.link->error(), p.link->last_error().message);
  }
  {
    // A peer of another protocol version: its own kind, with its version.
    RawPair p;
    auto s = stream_of({3});
    s[4] = std::byte{1};  // version 1
    p.write(s);
    Collector c;
    EXPECT_EQ(p.link->progress_recv(c, 0), LinkStatus::kError);
    EXPECT_EQ(p.link->last_error().kind, LinkErrorKind::kVersionMismatch);
    EXPECT_EQ(p.link->last_error().peer_version, 1u);
    EXPECT_NE(p.link->error().find("speaks zipper protocol version 1, this end speaks 2"),
              std::string::npos)
        << p.link->error();
    EXPECT_TRUE(c.headers.empty());
  }
  {
    RawPair p;
    p.write(stream_of({3, 70000, 0}));
    p.other.reset();
    Collector c;
    EXPECT_EQ(p.link->progress_recv(c, 0), LinkStatus::kClosed);
    EXPECT_EQ(p.link->last_error().kind, LinkErrorKind::kNone);
    c.expect_frames({3, 70000, 0});
  }
}

// stop_at_short_read: one read per batch of small frames; an end of stream
// that came with the data is seen at the next call, or at once after
// note_peer_hangup (what an edge-triggered poller reports).
TEST(TcpLinkShortRead, StopsAtAShortReadAndSeesTheEndNextOrAtOnceAfterAHangUp) {
  {
    RawPair p;
    p.link->stop_at_short_read(true);
    p.write(stream_of({3, 100}));
    Collector c;
    EXPECT_EQ(p.link->progress_recv(c, 0), LinkStatus::kOk);
    c.expect_frames({3, 100});
    p.write(stream_of({7}));
    p.other.reset();
    Collector d;
    EXPECT_EQ(p.link->progress_recv(d, 0), LinkStatus::kOk);  // the data; the end not yet read
    d.expect_frames({7});
    EXPECT_EQ(p.link->progress_recv(d, 0), LinkStatus::kClosed);
    EXPECT_EQ(p.link->last_error().kind, LinkErrorKind::kNone);
  }
  {
    RawPair p;
    p.link->stop_at_short_read(true);
    p.write(stream_of({3, 70000, 0}));
    p.other.reset();
    p.link->note_peer_hangup();
    Collector c;
    EXPECT_EQ(p.link->progress_recv(c, 0), LinkStatus::kClosed);
    c.expect_frames({3, 70000, 0});
  }
  {
    // Truncated: the bytes there are delivered, and the cut is an error.
    RawPair p;
    p.link->stop_at_short_read(true);
    const auto s = stream_of({100, 50000});
    p.write(std::span<const std::byte>(s).first(s.size() - 7));
    p.other.reset();
    Collector c;
    LinkStatus st = p.link->progress_recv(c, 0);
    for (int i = 0; i < 4 && st == LinkStatus::kOk; ++i) st = p.link->progress_recv(c, 0);
    EXPECT_EQ(st, LinkStatus::kError);
    EXPECT_EQ(p.link->last_error().kind, LinkErrorKind::kTruncated);
    EXPECT_EQ(c.headers.size(), 1u);
  }
}

// ------------------------------------------------------------------ regions

TEST(LongLivedRegions, AnnounceFindWithdraw) {
  std::vector<std::byte> mem(4096);
  const auto gen0 = long_lived_regions_generation();
  LongLivedRegion r;
  EXPECT_FALSE(find_long_lived_region(mem.data() + 10, 10, &r));
  {
    RegionAnnouncement a = register_long_lived_region(mem.data() + 1024, 2048);
    EXPECT_NE(long_lived_regions_generation(), gen0);
    ASSERT_TRUE(find_long_lived_region(mem.data() + 1024, 2048, &r));
    EXPECT_EQ(r.id, a.id());
    EXPECT_TRUE(find_long_lived_region(mem.data() + 2000, 100, &r));
    EXPECT_FALSE(find_long_lived_region(mem.data() + 3000, 100, &r));  // runs past its end
    EXPECT_FALSE(find_long_lived_region(mem.data() + 1000, 100, &r));  // starts before
    EXPECT_THROW(register_long_lived_region(mem.data() + 3000, 100), std::invalid_argument);
    EXPECT_THROW(register_long_lived_region(mem.data(), 1025), std::invalid_argument);
    RegionAnnouncement b = register_long_lived_region(mem.data(), 1024);  // adjacent is fine
    EXPECT_EQ(long_lived_regions().size(), 2u);
  }
  EXPECT_FALSE(find_long_lived_region(mem.data() + 2000, 100, &r));
  EXPECT_TRUE(long_lived_regions().empty());
}

}  // namespace
