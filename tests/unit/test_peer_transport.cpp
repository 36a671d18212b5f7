// The delivery layer (client/peer_transport.h) between two ranks of
// different clusters, over fake rails whose frames the test carries by hand:
// in order or not, twice, lost, or dropped with a dying rail. No MPI.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <numeric>
#include <thread>
#include <vector>

#include "client/peer_transport.h"

namespace {

using namespace zipper::client;  // NOLINT: the layer under test
using namespace zipper::proto;   // NOLINT

constexpr std::uint64_t kChunk = 16 * 1024;

// k rails, each a queue of frames the test delivers (or drops).
class FakeRails final : public RailPort {
 public:
  explicit FakeRails(int k)
      : up(static_cast<std::size_t>(k), true), q(static_cast<std::size_t>(k)) {}
  int size() const override { return static_cast<int>(q.size()); }
  bool usable(int i) const override { return up[static_cast<std::size_t>(i)]; }
  int pair_rail(int local_index, std::uint64_t avoid) const override {
    for (int s = 0; s < size(); ++s) {
      const int i = (local_index + s) % size();
      if (usable(i) && !(avoid >> i & 1)) return i;
    }
    return -1;
  }
  int chunk_rail(std::uint64_t avoid) override {
    for (int s = 0; s < size(); ++s) {
      const int i = (next_ + s) % size();
      if (usable(i) && !(avoid >> i & 1)) {
        next_ = (i + 1) % size();
        return i;
      }
    }
    return -1;
  }
  std::uint64_t chunk_size() const override { return kChunk; }
  void send(int i, OutFrame f) override { q[static_cast<std::size_t>(i)].push_back(std::move(f)); }
  void flush() override {}
  void fail_soon(int, std::string why) override { failure = std::move(why); }

  std::vector<bool> up;
  std::vector<std::deque<OutFrame>> q;
  std::string failure;

 private:
  int next_ = 0;
};

// The engine's part: every EAGER/RTS in the order handed up, rendezvous
// receives into buffers of their own, sends completed.
class FakeEngine final : public DeliveryHandler {
 public:
  struct Msg {
    FrameType type;
    std::uint64_t seq;
    std::vector<std::byte> bytes;
  };
  PeerTransport* t = nullptr;
  std::vector<Msg> in;                                    // in the order handed up
  std::map<std::uint64_t, std::vector<std::byte>> rndv;   // receiving, by seq
  std::map<std::uint64_t, std::vector<std::byte>> whole;  // received whole
  std::map<std::uint64_t, std::uint64_t> got;
  std::vector<Request*> completed;
  bool gone = false, lost = false;

  std::optional<Payload> header_in_order(int, const FrameHeader&) override { return std::nullopt; }
  void message_in_order(int, const FrameHeader& h, Payload p) override {
    in.push_back(Msg{h.type, h.seq, {p.bytes.begin(), p.bytes.end()}});
    if (h.type != FrameType::kRts) return;
    rndv[h.seq].resize(h.msg_len);  // matched at once: accept every byte
    got[h.seq] = 0;
    t->send_cts(static_cast<int>(h.src), h.tag, h.seq, h.msg_len);
    if (h.msg_len == 0) {
      whole[h.seq] = {};
      rndv.erase(h.seq);
      t->rendezvous_received(static_cast<int>(h.src), h.seq);
    }
  }
  std::optional<Payload> chunk_dest(const FrameHeader& h) override {
    auto it = rndv.find(h.seq);
    if (it == rndv.end() || h.chunk_offset + h.payload_len > it->second.size()) return std::nullopt;
    return Payload::borrow(it->second.data() + h.chunk_offset, h.payload_len);
  }
  bool chunk_in(const FrameHeader& h) override {
    auto it = rndv.find(h.seq);
    if (it == rndv.end()) {
      ADD_FAILURE() << "chunk for no receive: seq " << h.seq;
      return false;
    }
    got[h.seq] += h.payload_len;
    if (got[h.seq] < it->second.size()) return false;
    whole[h.seq] = std::move(it->second);
    rndv.erase(it);
    return true;
  }
  RtsState rts_state(int, std::uint64_t seq, std::uint64_t* accepted) override {
    if (auto it = rndv.find(seq); it != rndv.end()) {
      *accepted = it->second.size();
      return RtsState::kArriving;
    }
    return RtsState::kDone;
  }
  void send_complete(Request* owner) override { completed.push_back(owner); }
  void peer_gone(int, const std::string&) override { gone = true; }
  void link_failed() override { lost = true; }
};

Request* tag(int i) { return reinterpret_cast<Request*>(static_cast<std::uintptr_t>(0x1000 + i)); }

std::vector<std::byte> pattern(std::size_t n, int salt) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + salt) & 0xff);
  return v;
}

// Rank 0 (cluster A: world rank 0) and rank 1 (cluster B: world rank 1), k rails.
struct Pair {
  explicit Pair(int k) : rails_a(k), rails_b(k) {
    std::string why;
    ta = std::make_unique<PeerTransport>(rails_a, a, 0, *SiteMap::make({1, 1}, 0, &why), 1 << 20,
                                         100);
    tb = std::make_unique<PeerTransport>(rails_b, b, 1, *SiteMap::make({1, 1}, 1, &why), 1 << 20,
                                         100);
    a.t = ta.get();
    b.t = tb.get();
  }
  // Takes the first frame off `rail` of `from` and hands it to the other side.
  bool carry(FakeRails& from, int rail, bool drop = false) {
    auto& q = from.q[static_cast<std::size_t>(rail)];
    if (q.empty()) return false;
    OutFrame f = std::move(q.front());
    q.pop_front();
    if (f.on_sent) f.on_sent();
    if (drop) return true;
    PeerTransport& to = &from == &rails_a ? *tb : *ta;
    f.hdr.src = &from == &rails_a ? 0 : 1;  // zipperd stamps the sender
    f.hdr.payload_len = static_cast<std::uint32_t>(f.payload.bytes.size());
    auto dest = to.payload_dest(rail, f.hdr);
    EXPECT_TRUE(dest.has_value());
    EXPECT_EQ(dest->bytes.size(), f.payload.bytes.size());
    if (!f.payload.bytes.empty())
      std::memcpy(dest->bytes.data(), f.payload.bytes.data(), f.payload.bytes.size());
    to.on_data_frame(rail, f.hdr, std::move(*dest));
    return true;
  }
  // Carries everything queued, both ways, until nothing moves, waiting
  // out the delay of acknowledgements (kAckDelay).
  void settle() {
    for (bool moved = true; moved;) {
      moved = false;
      for (FakeRails* r : {&rails_a, &rails_b})
        for (int i = 0; i < r->size(); ++i)
          while (carry(*r, i)) moved = true;
      ta->tick();
      tb->tick();
      if (!moved) {
        std::this_thread::sleep_for(2 * zipper::client::kAckDelay);
        ta->tick();
        tb->tick();
        moved = queued(rails_a) + queued(rails_b) > 0;
      }
    }
  }
  void eager(int seq_expected, const std::vector<std::byte>& bytes, int owner) {
    OutFrame f;
    f.hdr.type = FrameType::kEager;
    f.hdr.dst = 1;
    f.hdr.seq = ta->next_seq(1);
    EXPECT_EQ(f.hdr.seq, static_cast<std::uint64_t>(seq_expected));
    f.hdr.msg_len = bytes.size();
    f.payload = Payload::borrow(const_cast<std::byte*>(bytes.data()), bytes.size());
    ta->send_eager(std::move(f), tag(owner));
  }
  SendStream& rendezvous(std::vector<std::byte>& bytes, int owner) {
    auto& s = streams.emplace_back();
    s.owner = tag(owner);
    s.peer = 1;
    s.seq = ta->next_seq(1);
    s.data = bytes.data();
    s.bytes = bytes.size();
    ta->send_rts(&s);
    return s;
  }
  // Rail `i` dies on both sides with what it held, as a failed zipperd.
  void kill_rail(int i) {
    for (FakeRails* r : {&rails_a, &rails_b}) {
      r->up[static_cast<std::size_t>(i)] = false;
      r->q[static_cast<std::size_t>(i)].clear();
    }
    ta->on_rail_failed(i);
    tb->on_rail_failed(i);
  }
  std::size_t queued(FakeRails& r) const {
    std::size_t n = 0;
    for (auto& q : r.q) n += q.size();
    return n;
  }

  FakeRails rails_a, rails_b;
  FakeEngine a, b;
  std::unique_ptr<PeerTransport> ta, tb;
  std::deque<SendStream> streams;
};

std::vector<std::uint64_t> seqs(const FakeEngine& e) {
  std::vector<std::uint64_t> s;
  for (const auto& m : e.in) s.push_back(m.seq);
  return s;
}

TEST(PeerTransport, OneRailPassesFramesStraightThrough) {
  Pair p(1);
  const auto m0 = pattern(100, 1);
  p.eager(0, m0, 0);
  ASSERT_EQ(p.rails_a.q[0].size(), 1u);
  EXPECT_TRUE(p.a.completed.empty());  // the user's buffer is still on the link
  EXPECT_TRUE(p.ta->acknowledged());   // nothing is kept for resending
  p.settle();
  EXPECT_EQ(p.a.completed, std::vector<Request*>{tag(0)});
  ASSERT_EQ(p.b.in.size(), 1u);
  EXPECT_EQ(p.b.in[0].bytes, m0);
  EXPECT_TRUE(p.rails_b.q[0].empty());  // no ACK travels back
}

TEST(PeerTransport, OneRailRendezvousCompletesWhenTheLastChunkIsWritten) {
  Pair p(1);
  auto msg = pattern(5 * kChunk + 77, 2);
  p.rendezvous(msg, 7);
  p.settle();
  EXPECT_EQ(p.a.completed, std::vector<Request*>{tag(7)});
  ASSERT_EQ(p.b.whole.count(0), 1u);
  EXPECT_EQ(p.b.whole[0], msg);
  EXPECT_EQ(p.rails_a.failure, "");
}

TEST(PeerTransport, OneRailOrderViolationFailsTheLink) {
  Pair p(1);
  const auto m = pattern(8, 3);
  p.eager(0, m, 0);
  p.eager(1, m, 1);
  std::swap(p.rails_a.q[0][0], p.rails_a.q[0][1]);
  p.carry(p.rails_a, 0);
  EXPECT_NE(p.rails_b.failure.find("order violated"), std::string::npos) << p.rails_b.failure;
}

TEST(PeerTransport, ReorderedHeadersAreHandedUpInSequenceOrder) {
  Pair p(2);
  std::vector<std::vector<std::byte>> m;
  for (int i = 0; i < 4; ++i) m.push_back(pattern(10 + i, i));
  for (int i = 0; i < 4; ++i) p.eager(i, m[i], i);
  // The pair's rail is rail 0; move frames 0 and 2 to rail 1 (a failover
  // overtaking) and deliver 3, 2, 1, 0.
  auto& q0 = p.rails_a.q[0];
  ASSERT_EQ(q0.size(), 4u);
  std::deque<OutFrame> frames;
  for (auto& f : q0) frames.push_back(std::move(f));
  q0.clear();
  for (int i = 3; i >= 0; --i)
    p.rails_a.q[static_cast<std::size_t>(i % 2)].push_back(std::move(frames[i]));
  p.settle();
  EXPECT_EQ(seqs(p.b), (std::vector<std::uint64_t>{0, 1, 2, 3}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p.b.in[static_cast<std::size_t>(i)].bytes, m[i]);
  EXPECT_TRUE(p.ta->acknowledged());  // the ACK released every copy
}

TEST(PeerTransport, DuplicatesAreDroppedAndAnswered) {
  Pair p(2);
  const auto m = pattern(33, 4);
  p.eager(0, m, 0);
  OutFrame copy;
  copy.hdr = p.rails_a.q[0].front().hdr;
  auto bytes = std::make_shared<std::vector<std::byte>>(m);
  copy.payload = Payload{std::span<std::byte>(bytes->data(), bytes->size()), bytes};
  p.rails_a.q[1].push_back(std::move(copy));
  p.settle();
  ASSERT_EQ(p.b.in.size(), 1u);
  EXPECT_EQ(p.b.in[0].bytes, m);
  EXPECT_TRUE(p.ta->acknowledged());
  EXPECT_EQ(p.rails_b.failure, "");
}

TEST(PeerTransport, LostFramesAreResentWhenTheirRailFails) {
  Pair p(2);
  std::vector<std::vector<std::byte>> m;
  for (int i = 0; i < 3; ++i) m.push_back(pattern(1000, 10 + i));
  for (int i = 0; i < 3; ++i) p.eager(i, m[i], i);
  // Every sender's copy completes at once; rail 0 loses frame 1 and dies.
  EXPECT_EQ(p.a.completed.size(), 3u);
  p.carry(p.rails_a, 0);
  p.carry(p.rails_a, 0, /*drop=*/true);
  p.carry(p.rails_a, 0);
  EXPECT_EQ(seqs(p.b), (std::vector<std::uint64_t>{0}));  // 2 waits in the hold
  p.kill_rail(0);
  p.settle();
  EXPECT_EQ(seqs(p.b), (std::vector<std::uint64_t>{0, 1, 2}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.b.in[static_cast<std::size_t>(i)].bytes, m[i]);
  EXPECT_TRUE(p.ta->acknowledged());
}

TEST(PeerTransport, LostAcknowledgementsAreResentAfterTheTimeout) {
  Pair p(2);
  const auto m = pattern(64, 5);
  p.eager(0, m, 0);
  p.carry(p.rails_a, 0);
  // The receiver's ACK is lost.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  p.tb->tick();
  ASSERT_FALSE(p.rails_b.q[0].empty());
  p.rails_b.q[0].clear();
  EXPECT_FALSE(p.ta->acknowledged());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the 100 ms floor
  p.ta->tick();
  p.settle();
  EXPECT_EQ(seqs(p.b), (std::vector<std::uint64_t>{0}));  // the resend was a duplicate
  EXPECT_TRUE(p.ta->acknowledged());
}

TEST(PeerTransport, RendezvousSurvivesARailDyingMidMessage) {
  Pair p(2);
  auto msg = pattern(8 * kChunk + 5, 6);
  p.rendezvous(msg, 9);
  p.carry(p.rails_a, 0);  // RTS
  p.carry(p.rails_b, 0);  // CTS: chunks now queued on both rails
  ASSERT_TRUE(p.a.completed.empty());
  ASSERT_FALSE(p.rails_a.q[1].empty());
  // Rail 1 dies with its chunks unsent; rail 0 carries one chunk then its rest.
  p.carry(p.rails_a, 0);
  p.kill_rail(1);
  p.settle();
  EXPECT_EQ(p.a.completed, std::vector<Request*>{tag(9)});  // on the FIN
  ASSERT_EQ(p.b.whole.count(0), 1u);
  EXPECT_EQ(p.b.whole[0], msg);
  EXPECT_TRUE(p.ta->acknowledged());
  EXPECT_EQ(p.rails_b.failure, "");
}

TEST(PeerTransport, ResentChunksAreDroppedOnce) {
  Pair p(2);
  auto msg = pattern(4 * kChunk, 7);
  p.rendezvous(msg, 3);
  p.carry(p.rails_a, 0);  // RTS
  p.carry(p.rails_b, 0);  // CTS
  // Every chunk delivered twice.
  for (auto& q : p.rails_a.q) {
    std::deque<OutFrame> twice;
    for (auto& f : q) {
      OutFrame c;
      c.hdr = f.hdr;
      c.payload = f.payload;
      twice.push_back(std::move(c));
      twice.push_back(std::move(f));
    }
    q = std::move(twice);
  }
  p.settle();
  EXPECT_EQ(p.b.got[0], msg.size());  // not twice the message
  EXPECT_EQ(p.b.whole[0], msg);
  EXPECT_EQ(p.a.completed, std::vector<Request*>{tag(3)});
  EXPECT_EQ(p.rails_b.failure, "");
}

TEST(PeerTransport, ZeroByteMessages) {
  for (int k : {1, 2}) {
    SCOPED_TRACE(k);
    Pair p(k);
    const std::vector<std::byte> none;
    p.eager(0, none, 0);
    if (k > 1) {
      EXPECT_FALSE(p.ta->acknowledged());  // an empty copy is still waited for
    }
    std::vector<std::byte> empty;
    p.rendezvous(empty, 1);
    p.settle();
    EXPECT_EQ(seqs(p.b), (std::vector<std::uint64_t>{0, 1}));
    EXPECT_TRUE(p.b.in[0].bytes.empty());
    EXPECT_EQ(p.b.whole.count(1), 1u);
    EXPECT_EQ(p.a.completed.size(), 2u);
    EXPECT_TRUE(p.ta->acknowledged());
  }
}

TEST(PeerTransport, APeerGoneFromEveryRailFailsItsSends) {
  Pair p(2);
  auto msg = pattern(3 * kChunk, 8);
  p.rendezvous(msg, 4);
  EXPECT_TRUE(p.ta->on_peer_gone(0, 1, "gone"));
  EXPECT_FALSE(p.a.gone);  // rail 1 still reaches it: resent there
  EXPECT_FALSE(p.rails_a.q[1].empty());
  EXPECT_TRUE(p.ta->on_peer_gone(1, 1, "gone"));
  EXPECT_TRUE(p.a.gone);
  EXPECT_EQ(p.ta->drop_peer(1), std::vector<Request*>{tag(4)});
  EXPECT_TRUE(p.ta->acknowledged());
  EXPECT_FALSE(p.ta->on_peer_gone(0, 0, "self"));  // its own cluster: not a peer
}

}  // namespace
