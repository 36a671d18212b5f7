// TCP link backend over loopback: framing, large payloads, callbacks, close
// and error reporting, endpoint parsing.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/link.h"
#include "test_util.h"

namespace {

using namespace zipper;
using namespace zipper::test;
using proto::FrameType;
using proto::LinkStatus;

// A connected pair of links over 127.0.0.1.
struct Pair {
  std::unique_ptr<proto::Listener> listener;
  std::unique_ptr<FrameClient> a;  // connecting side
  std::unique_ptr<FrameClient> b;  // accepted side
  std::vector<FrameClient*> both() { return {a.get(), b.get()}; }
};

Pair make_pair() {
  Pair p;
  std::string why;
  auto ep = proto::parse_endpoint("tcp:127.0.0.1:0", &why);
  if (!ep) throw std::runtime_error(why);
  p.listener = proto::listen(*ep);
  p.a = FrameClient::connect(p.listener->address());
  const auto deadline = Clock::now() + kWait;
  while (Clock::now() < deadline) {
    if (auto l = p.listener->accept()) {
      p.b = std::make_unique<FrameClient>(std::move(l));
      break;
    }
    pollfd pfd{p.listener->poll_fd(), POLLIN, 0};
    ::poll(&pfd, 1, 50);
  }
  if (!p.b) throw std::runtime_error("accept timed out");
  return p;
}

proto::FrameHeader eager_header(std::uint64_t seq, std::size_t len) {
  auto h = header(FrameType::kEager, 9, 1, 2);
  h.seq = seq;
  h.tag = static_cast<std::int32_t>(seq);
  h.msg_len = len;
  return h;
}

TEST(TcpLink, ListenOnPortZeroReportsBoundAddress) {
  auto p = make_pair();
  const std::string addr = p.listener->address();
  ASSERT_EQ(addr.rfind("tcp:127.0.0.1:", 0), 0u) << addr;
  std::string why;
  auto ep = proto::parse_endpoint(addr, &why);
  ASSERT_TRUE(ep.has_value()) << why;
  EXPECT_NE(ep->port, 0);
  EXPECT_EQ(p.a->link().peer(), addr);
  EXPECT_EQ(p.b->link().peer().rfind("tcp:127.0.0.1:", 0), 0u) << p.b->link().peer();
  EXPECT_GE(p.a->fd(), 0);
  EXPECT_EQ(p.listener->accept(), nullptr);  // nothing else pending
}

TEST(TcpLink, ExchangeFramesBothWays) {
  auto p = make_pair();
  const std::vector<std::size_t> sizes = {0, 1, 4096, 4u << 20};
  int sent_a = 0, sent_b = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    p.a->send(eager_header(i, sizes[i]), pattern(100 + i, sizes[i]), [&] { ++sent_a; });
    p.b->send(eager_header(i, sizes[i]), pattern(200 + i, sizes[i]), [&] { ++sent_b; });
  }
  ASSERT_TRUE(pump_until(
      p.both(),
      [&] { return p.a->inbox().size() == sizes.size() && p.b->inbox().size() == sizes.size(); }))
      << "a got " << p.a->inbox().size() << ", b got " << p.b->inbox().size();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    SCOPED_TRACE(sizes[i]);
    const Frame fb = *p.b->pop();  // sent by a
    const Frame fa = *p.a->pop();  // sent by b
    for (const auto& [f, seed] : {std::pair{&fb, 100 + i}, std::pair{&fa, 200 + i}}) {
      EXPECT_EQ(f->hdr.type, FrameType::kEager);
      EXPECT_EQ(f->hdr.seq, i);
      EXPECT_EQ(f->hdr.tag, static_cast<std::int32_t>(i));
      EXPECT_EQ(f->hdr.job_id, 9u);
      EXPECT_EQ(f->hdr.src, 1u);
      EXPECT_EQ(f->hdr.dst, 2u);
      EXPECT_EQ(f->hdr.payload_len, sizes[i]);
      EXPECT_EQ(f->hdr.msg_len, sizes[i]);
      ASSERT_EQ(f->payload.size(), sizes[i]);
      EXPECT_EQ(pattern_mismatch(seed, f->payload), std::string::npos);
    }
  }
  EXPECT_EQ(sent_a, 4);
  EXPECT_EQ(sent_b, 4);
  EXPECT_FALSE(p.a->link().send_pending());
  EXPECT_EQ(p.a->link().send_queued_bytes(), 0u);
  EXPECT_FALSE(p.a->closed());
  EXPECT_FALSE(p.b->closed());
}

TEST(TcpLink, ManySmallFramesArriveInOrder) {
  auto p = make_pair();
  constexpr int kFrames = 3000;
  for (int i = 0; i < kFrames; ++i) {
    const std::size_t n = static_cast<std::size_t>(i % 300);
    p.a->send(eager_header(static_cast<std::uint64_t>(i), n),
              pattern(static_cast<std::uint64_t>(i), n));
  }
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == kFrames; }))
      << p.b->inbox().size();
  for (int i = 0; i < kFrames; ++i) {
    const Frame f = *p.b->pop();
    ASSERT_EQ(f.hdr.seq, static_cast<std::uint64_t>(i));
    ASSERT_EQ(f.payload.size(), static_cast<std::size_t>(i % 300));
    ASSERT_EQ(pattern_mismatch(static_cast<std::uint64_t>(i), f.payload), std::string::npos);
  }
}

TEST(TcpLink, QueuedBytesAndOnSent) {
  auto p = make_pair();
  int fired = 0;
  // Posted without progressing: queued, nothing sent yet.
  p.a->link().post(
      proto::OutFrame{eager_header(1, 100), make_payload(pattern(1, 100)), [&] { ++fired; }});
  p.a->link().post(proto::OutFrame{header(FrameType::kBye, 9, 1, 2), {}, [&] { ++fired; }});
  EXPECT_TRUE(p.a->link().send_pending());
  EXPECT_EQ(p.a->link().send_queued_bytes(), 64u + 100u + 64u);
  EXPECT_EQ(fired, 0);
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == 2; }));
  EXPECT_EQ(fired, 2);
  EXPECT_FALSE(p.a->link().send_pending());
  EXPECT_EQ(p.a->link().send_queued_bytes(), 0u);
  // post() sets payload_len from the payload, whatever the header said.
  EXPECT_EQ(p.b->inbox()[0].hdr.payload_len, 100u);
  EXPECT_EQ(p.b->inbox()[1].hdr.type, FrameType::kBye);
}

// Urgent frames (credit returns) go ahead of queued frames not yet started,
// in order among themselves; the data frames keep their order.
TEST(TcpLink, UrgentFramesOvertakeQueuedData) {
  auto p = make_pair();
  p.b->keep_credit_frames(true);
  for (std::uint64_t i = 0; i < 3; ++i)
    p.a->link().post(proto::OutFrame{eager_header(i, 1000), make_payload(pattern(i, 1000)), {}});
  for (std::uint64_t i = 0; i < 2; ++i) {
    proto::OutFrame credit{header(FrameType::kCredit, 9, 1, 2), {}, {}};
    credit.hdr.seq = 100 + i;
    credit.urgent = true;
    p.a->link().post(std::move(credit));
  }
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == 5; }))
      << p.b->inbox().size() << " frames; " << p.b->link().error();
  const std::vector<std::uint64_t> want = {100, 101, 0, 1, 2};
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Frame f = *p.b->pop();
    EXPECT_EQ(f.hdr.seq, want[i]) << "frame " << i;
    if (f.hdr.type == FrameType::kEager) {
      EXPECT_EQ(pattern_mismatch(f.hdr.seq, f.payload), std::string::npos);
    }
  }
}

TEST(TcpLink, BorrowedPayload) {
  auto p = make_pair();
  std::vector<std::byte> user = pattern(77, 100000);
  bool sent = false;
  p.a->post(proto::OutFrame{eager_header(0, user.size()),
                            proto::Payload::borrow(user.data(), user.size()),
                            [&] { sent = true; }});
  ASSERT_TRUE(pump_until(p.both(), [&] { return sent && p.b->inbox().size() == 1; }));
  EXPECT_EQ(pattern_mismatch(77, p.b->inbox()[0].payload), std::string::npos);
}

TEST(TcpLink, HeaderHookRewritesAndDrops) {
  auto p = make_pair();
  int hook_calls = 0;
  p.a->link().set_header_hook([&](proto::FrameHeader& h) {
    ++hook_calls;
    h.credits = 1000 + static_cast<std::uint32_t>(h.seq);
    return h.type != FrameType::kCredit;  // drop CREDIT frames
  });
  int fired = 0;
  auto credit = header(FrameType::kCredit, 9, 0, 2);
  p.a->post(proto::OutFrame{eager_header(1, 10), make_payload(pattern(1, 10)), [&] { ++fired; }});
  p.a->post(proto::OutFrame{credit, {}, [&] { ++fired; }});
  p.a->post(proto::OutFrame{eager_header(3, 20), make_payload(pattern(3, 20)), [&] { ++fired; }});
  p.b->keep_credit_frames(true);
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == 2 && fired == 3; }));
  pump_for(p.both(), milliseconds(50));
  ASSERT_EQ(p.b->inbox().size(), 2u);
  EXPECT_EQ(p.b->inbox()[0].hdr.seq, 1u);
  EXPECT_EQ(p.b->inbox()[0].hdr.credits, 1001u);
  EXPECT_EQ(p.b->inbox()[1].hdr.seq, 3u);
  EXPECT_EQ(p.b->inbox()[1].hdr.credits, 1003u);
  EXPECT_EQ(hook_calls, 3);  // once per frame
  EXPECT_EQ(p.a->link().send_queued_bytes(), 0u);
}

TEST(TcpLink, ProgressRecvMaxFrames) {
  auto p = make_pair();
  for (int i = 0; i < 5; ++i)
    p.a->send(eager_header(static_cast<std::uint64_t>(i), 8), pattern(1, 8));
  ASSERT_TRUE(pump_until({p.a.get()}, [&] { return !p.a->link().send_pending(); }));
  // Give the bytes time to land, then take them one frame per call.
  pollfd pfd{p.b->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  std::size_t got = 0;
  const auto deadline = Clock::now() + kWait;
  while (got < 5 && Clock::now() < deadline) {
    const std::size_t before = p.b->inbox().size();
    ASSERT_EQ(p.b->link().progress_recv(*p.b, 1), LinkStatus::kOk);
    ASSERT_LE(p.b->inbox().size(), before + 1);
    got = p.b->inbox().size();
    if (got == before) ::poll(&pfd, 1, 20);
  }
  EXPECT_EQ(got, 5u);
}

TEST(TcpLink, PausedSinkResumes) {
  auto p = make_pair();
  p.b->set_paused(true);
  p.a->send(eager_header(5, 50000), pattern(5, 50000));
  pollfd pfd{p.b->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  LinkStatus st = LinkStatus::kOk;
  const auto deadline = Clock::now() + kWait;
  while (st != LinkStatus::kPaused && Clock::now() < deadline) {
    p.a->progress_send();
    st = p.b->link().progress_recv(*p.b, 0);
    if (st != LinkStatus::kPaused) ::poll(&pfd, 1, 20);
  }
  ASSERT_EQ(st, LinkStatus::kPaused);
  EXPECT_TRUE(p.b->inbox().empty());
  EXPECT_EQ(p.b->link().progress_recv(*p.b, 0), LinkStatus::kPaused);  // still paused
  p.b->set_paused(false);
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == 1; }));
  EXPECT_EQ(p.b->inbox()[0].hdr.seq, 5u);
  EXPECT_EQ(pattern_mismatch(5, p.b->inbox()[0].payload), std::string::npos);
}

TEST(TcpLink, PeerCloseIsClosed) {
  auto p = make_pair();
  p.a->send(eager_header(1, 10), pattern(1, 10));
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == 1; }));
  p.a.reset();  // closes the socket at a frame boundary
  ASSERT_TRUE(pump_until({p.b.get()}, [&] { return p.b->closed(); }));
  EXPECT_EQ(p.b->final_status(), LinkStatus::kClosed);
}

TEST(TcpLink, ShutdownWakesPeer) {
  auto p = make_pair();
  p.a->link().shutdown();
  ASSERT_TRUE(pump_until({p.b.get()}, [&] { return p.b->closed(); }));
  EXPECT_EQ(p.b->final_status(), LinkStatus::kClosed);
}

TEST(TcpLink, CloseInTheMiddleOfAFrameIsAnError) {
  auto p = make_pair();
  // A header promising 1000 payload bytes, then only 10 of them.
  std::array<std::byte, proto::kHeaderSize> wire{};
  auto h = eager_header(1, 1000);
  h.payload_len = 1000;
  proto::encode_header(h, wire);
  ASSERT_EQ(::write(p.a->fd(), wire.data(), wire.size()), 64);
  ASSERT_EQ(::write(p.a->fd(), wire.data(), 10), 10);
  p.a.reset();
  ASSERT_TRUE(pump_until({p.b.get()}, [&] { return p.b->closed(); }));
  EXPECT_EQ(p.b->final_status(), LinkStatus::kError);
  EXPECT_NE(p.b->link().error().find("middle of a frame"), std::string::npos)
      << p.b->link().error();
  EXPECT_TRUE(p.b->inbox().empty());
}

TEST(TcpLink, PartialHeaderThenCloseIsAnError) {
  auto p = make_pair();
  std::array<std::byte, proto::kHeaderSize> wire{};
  proto::encode_header(eager_header(1, 0), wire);
  ASSERT_EQ(::write(p.a->fd(), wire.data(), 30), 30);
  p.a.reset();
  ASSERT_TRUE(pump_until({p.b.get()}, [&] { return p.b->closed(); }));
  EXPECT_EQ(p.b->final_status(), LinkStatus::kError);
}

TEST(TcpLink, MalformedHeaderIsAnError) {
  auto p = make_pair();
  std::array<std::byte, proto::kHeaderSize> junk{};
  junk.fill(std::byte{0xAB});
  ASSERT_EQ(::write(p.a->fd(), junk.data(), junk.size()), 64);
  ASSERT_TRUE(pump_until({p.b.get()}, [&] { return p.b->closed(); }));
  EXPECT_EQ(p.b->final_status(), LinkStatus::kError);
  EXPECT_EQ(p.b->link().error().rfind("malformed", 0), 0u) << p.b->link().error();
  EXPECT_NE(p.b->link().error().find("bad magic"), std::string::npos) << p.b->link().error();
}

TEST(TcpLink, OversizePayloadIsAnError) {
  auto p = make_pair();
  p.b->link().set_max_payload(1024);
  p.a->send(eager_header(1, 1024), pattern(1, 1024));  // exactly the limit: fine
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->inbox().size() == 1; }));
  p.a->send(eager_header(2, 1025), pattern(2, 1025));
  ASSERT_TRUE(pump_until(p.both(), [&] { return p.b->closed(); }));
  EXPECT_EQ(p.b->final_status(), LinkStatus::kError);
  EXPECT_NE(p.b->link().error().find("larger than"), std::string::npos) << p.b->link().error();
  EXPECT_EQ(p.b->inbox().size(), 1u);
}

TEST(TcpLink, SendToClosedPeerReportsErrorWithoutSignal) {
  auto p = make_pair();
  p.b.reset();  // the peer is gone
  // Keep writing: the first writes may still succeed; once the peer's reset
  // arrives the link must report kError (not raise SIGPIPE).
  LinkStatus st = LinkStatus::kOk;
  const auto deadline = Clock::now() + kWait;
  int i = 0;
  while (st != LinkStatus::kError && Clock::now() < deadline) {
    p.a->link().post(proto::OutFrame{
        eager_header(static_cast<std::uint64_t>(i), 1000), make_payload(pattern(1, 1000)), {}});
    st = p.a->link().progress_send();
    ++i;
    if (st != LinkStatus::kError) ::usleep(1000);
  }
  ASSERT_EQ(st, LinkStatus::kError);
  EXPECT_FALSE(p.a->link().error().empty());
}

TEST(TcpLink, ConnectRefusedTimesOut) {
  std::string why;
  auto ep = proto::parse_endpoint("tcp:127.0.0.1:0", &why);
  ASSERT_TRUE(ep);
  std::string addr;
  {
    auto l = proto::listen(*ep);
    addr = l->address();
  }  // closed: nobody listens there now
  auto target = proto::parse_endpoint(addr, &why);
  ASSERT_TRUE(target);
  const auto t0 = Clock::now();
  try {
    proto::connect(*target, 200);
    FAIL() << "connect to a closed port succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - t0, milliseconds(3000));
}

TEST(TcpLink, ListenOnBusyPortFails) {
  std::string why;
  auto ep = proto::parse_endpoint("tcp:127.0.0.1:0", &why);
  ASSERT_TRUE(ep);
  auto l = proto::listen(*ep);
  auto busy = proto::parse_endpoint(l->address(), &why);
  ASSERT_TRUE(busy);
  try {
    proto::listen(*busy);
    FAIL() << "second listener on " << l->address() << " succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen"), std::string::npos) << e.what();
  }
}

TEST(TcpLink, ParseEndpointGood) {
  std::string why;
  auto ep = proto::parse_endpoint("tcp:127.0.0.1:7470", &why);
  ASSERT_TRUE(ep) << why;
  EXPECT_EQ(ep->scheme, "tcp");
  EXPECT_EQ(ep->host, "127.0.0.1");
  EXPECT_EQ(ep->port, 7470);
  EXPECT_EQ(ep->to_string(), "tcp:127.0.0.1:7470");

  ep = proto::parse_endpoint("10.201.0.254:80", &why);  // tcp is the default scheme
  ASSERT_TRUE(ep) << why;
  EXPECT_EQ(ep->scheme, "tcp");
  EXPECT_EQ(ep->host, "10.201.0.254");
  EXPECT_EQ(ep->port, 80);

  ep = proto::parse_endpoint("verbs:ib0-host:65535", &why);
  ASSERT_TRUE(ep) << why;
  EXPECT_EQ(ep->scheme, "verbs");
  EXPECT_EQ(ep->host, "ib0-host");
  EXPECT_EQ(ep->port, 65535);

  ep = proto::parse_endpoint("localhost:0", &why);
  ASSERT_TRUE(ep) << why;
  EXPECT_EQ(ep->port, 0);
}

TEST(TcpLink, ParseEndpointBad) {
  for (const char* bad :
       {"", "tcp:", "127.0.0.1", ":7470", "tcp::7470", "host:", "host:65536", "host:99999999999",
        "host:abc", "host:80x", "host:-1", "host: 80", "verbs:"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    std::string why;
    EXPECT_FALSE(proto::parse_endpoint(bad, &why).has_value());
    EXPECT_FALSE(why.empty());
    EXPECT_NE(why.find(bad), std::string::npos) << why;  // the message names the input
  }
}

TEST(TcpLink, VerbsSchemeGivesClearError) {
  std::string why;
  auto ep = proto::parse_endpoint("verbs:127.0.0.1:7470", &why);
  ASSERT_TRUE(ep) << why;
  for (int which = 0; which < 2; ++which) {
    try {
      if (which == 0)
        proto::listen(*ep);
      else
        proto::connect(*ep, 100);
      FAIL() << "verbs link was created";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("verbs"), std::string::npos) << msg;
      EXPECT_NE(msg.find("not available"), std::string::npos) << msg;
      EXPECT_NE(msg.find("tcp:"), std::string::npos) << msg;  // suggests the alternative
    }
  }
}

}  // namespace
