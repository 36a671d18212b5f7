// Verbs link pieces that need no RDMA device: the MR cache (eviction,
// invalidation of freed/reused buffers, in-flight registrations), receive
// credit accounting (no overrun, no deadlock), the wire encodings, the
// settings rows (parsing, ranges, defaults), and the clear error when no RDMA device exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/link.h"
#include "proto/verbs/config.h"
#include "proto/verbs/credits.h"
#include "proto/verbs/mr_cache.h"
#include "proto/verbs/wire.h"

namespace {

using namespace zipper::proto;
using namespace zipper::proto::verbs;

// A registrar that records what is registered, like ibv_reg_mr/ibv_dereg_mr.
struct FakeHca {
  std::map<std::uint32_t, std::pair<void*, std::size_t>> live;  // lkey -> range
  std::vector<std::uint32_t> deregistered;
  std::uint32_t next_key = 1;
  int registrations = 0;
  bool fail_next = false;

  Registrar registrar() {
    Registrar r;
    r.reg = [this](void* addr, std::size_t len, std::string* why) {
      if (fail_next) {
        fail_next = false;
        *why = "ibv_reg_mr: Cannot allocate memory";
        return Registration{};
      }
      ++registrations;
      const std::uint32_t k = next_key++;
      live[k] = {addr, len};
      return Registration{k, k + 1000, reinterpret_cast<void*>(static_cast<std::uintptr_t>(k))};
    };
    r.dereg = [this](const Registration& reg) {
      EXPECT_EQ(live.erase(reg.lkey), 1u) << "double deregistration of lkey " << reg.lkey;
      deregistered.push_back(reg.lkey);
    };
    return r;
  }
};

std::shared_ptr<void> owned(std::size_t n) {
  std::shared_ptr<std::byte[]> mem(new std::byte[n]);
  return std::shared_ptr<void>(mem, mem.get());
}

TEST(MrCache, HitsForTheSameLiveBuffer) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {});
  auto buf = owned(4096);
  std::string why;
  auto a = cache.get(buf.get(), 4096, buf, &why);
  auto b = cache.get(buf.get(), 4096, buf, &why);
  ASSERT_TRUE(a && b) << why;
  EXPECT_EQ(a->lkey, b->lkey);
  EXPECT_EQ(hca.registrations, 1);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(MrCache, FreedAndReusedAddressIsNeverServedStale) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {});
  std::vector<std::byte> storage(8192);  // same address for two "allocations"
  std::string why;
  std::uint32_t first_key = 0;
  {
    auto owner1 = std::make_shared<int>(1);
    auto h = cache.get(storage.data(), storage.size(), owner1, &why);
    ASSERT_TRUE(h) << why;
    first_key = h->lkey;
  }  // owner1 gone: the buffer counts as freed
  auto owner2 = std::make_shared<int>(2);
  auto h2 = cache.get(storage.data(), storage.size(), owner2, &why);
  ASSERT_TRUE(h2) << why;
  EXPECT_NE(h2->lkey, first_key) << "stale MR returned for a reused buffer";
  EXPECT_EQ(hca.registrations, 2);
  EXPECT_EQ(hca.live.count(first_key), 0u) << "stale MR was not deregistered";
  EXPECT_EQ(cache.stats().invalidations, 1u);
}

TEST(MrCache, DifferentLiveOwnerOfTheSameRangeInvalidates) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {});
  std::vector<std::byte> storage(4096);
  auto o1 = std::make_shared<int>(1), o2 = std::make_shared<int>(2);
  std::string why;
  auto h1 = cache.get(storage.data(), 4096, o1, &why);
  auto h2 = cache.get(storage.data(), 4096, o2, &why);
  ASSERT_TRUE(h1 && h2);
  EXPECT_NE(h1->lkey, h2->lkey);
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(MrCache, EvictsLeastRecentlyUsedByCount) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {.max_entries = 2, .max_bytes = 1 << 20});
  auto a = owned(100), b = owned(100), c = owned(100);
  std::string why;
  const auto ka = cache.get(a.get(), 100, a, &why)->lkey;
  const auto kb = cache.get(b.get(), 100, b, &why)->lkey;
  cache.get(a.get(), 100, a, &why);  // a is now most recent
  cache.get(c.get(), 100, c, &why);  // evicts b
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(hca.live.count(kb), 0u);
  EXPECT_EQ(hca.live.count(ka), 1u);
}

TEST(MrCache, EvictsToStayWithinBytes) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {.max_entries = 100, .max_bytes = 1000});
  std::vector<std::shared_ptr<void>> bufs;
  std::string why;
  for (int i = 0; i < 5; ++i) {
    bufs.push_back(owned(400));
    ASSERT_TRUE(cache.get(bufs.back().get(), 400, bufs.back(), &why)) << why;
    EXPECT_LE(cache.bytes(), 1000u);
  }
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(hca.live.size(), 2u);
  EXPECT_FALSE(cache.get(bufs[0].get(), 2000, bufs[0], &why)) << "larger than the cache";
}

TEST(MrCache, InFlightRegistrationOutlivesEviction) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {.max_entries = 1, .max_bytes = 1 << 20});
  auto a = owned(64), b = owned(64);
  std::string why;
  auto in_flight = cache.get(a.get(), 64, a, &why);  // e.g. held by a posted WR
  cache.get(b.get(), 64, b, &why);                   // evicts a from the cache
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(hca.live.count(in_flight->lkey), 1u) << "MR deregistered while still in use";
  const auto k = in_flight->lkey;
  in_flight.reset();  // the WR completed
  EXPECT_EQ(hca.live.count(k), 0u);
}

TEST(MrCache, RefusesMemoryWithoutOwnerAndReportsFailures) {
  FakeHca hca;
  MrCache cache(hca.registrar(), {});
  std::vector<std::byte> user(256);
  std::string why;
  EXPECT_FALSE(cache.get(user.data(), user.size(), nullptr, &why));
  EXPECT_NE(why.find("owner"), std::string::npos) << why;
  auto o = owned(0);
  EXPECT_FALSE(cache.get(user.data(), 0, o, &why));
  hca.fail_next = true;
  auto buf = owned(64);
  EXPECT_FALSE(cache.get(buf.get(), 64, buf, &why));
  EXPECT_NE(why.find("ibv_reg_mr"), std::string::npos) << why;
  EXPECT_EQ(cache.stats().failures, 1u);
  EXPECT_EQ(hca.registrations, 0);
}

TEST(MrCache, DestructionDeregistersEverything) {
  FakeHca hca;
  auto a = owned(64), b = owned(64);
  {
    MrCache cache(hca.registrar(), {});
    std::string why;
    cache.get(a.get(), 64, a, &why);
    cache.get(b.get(), 64, b, &why);
    EXPECT_EQ(hca.live.size(), 2u);
  }
  EXPECT_TRUE(hca.live.empty());
}

TEST(VerbsCredits, KeepsOneCreditInReserveForCreditMessages) {
  BufferCredits c(8, 8);
  int sent = 0;
  while (c.can_send_data()) {
    c.on_send();
    ++sent;
  }
  EXPECT_EQ(sent, 7);
  EXPECT_EQ(c.credits(), 1u);
  EXPECT_FALSE(c.credit_message_due());  // nothing owed yet
  for (int i = 0; i < 4; ++i) c.on_reposted();
  EXPECT_TRUE(c.credit_message_due());  // threshold = 8 / 2
  EXPECT_EQ(c.on_send(), 4u);           // the credit message returns all that is owed
  EXPECT_EQ(c.credits(), 0u);
  EXPECT_FALSE(c.credit_message_due());
}

TEST(VerbsCredits, PiggybacksOwedCreditsOnSends) {
  BufferCredits c(16, 16);
  for (int i = 0; i < 3; ++i) c.on_reposted();
  EXPECT_EQ(c.on_send(), 3u);
  EXPECT_EQ(c.on_send(), 0u);
  EXPECT_EQ(c.owed(), 0u);
}

TEST(VerbsCredits, RejectsMoreCreditsThanThePeerCouldOwe) {
  BufferCredits c(4, 4);
  c.on_send();
  EXPECT_TRUE(c.on_returned(1));
  EXPECT_FALSE(c.on_returned(1)) << "would exceed the peer's 4 receive buffers";
  EXPECT_EQ(c.credits(), 4u);
}

TEST(VerbsCredits, CapsCreditsPerMessage) {
  BufferCredits c(4, 4);
  for (std::uint32_t i = 0; i < kMaxCreditsPerMessage + 10; ++i) c.on_reposted();
  EXPECT_EQ(c.on_send(), kMaxCreditsPerMessage);
  EXPECT_EQ(c.owed(), 10u);
}

// Two endpoints exchanging SENDs through an in-order network with random
// scheduling: a receive buffer is never overrun (no RNR) and both sides always
// finish (no credit deadlock), also when one side sends nothing at all.
struct Side {
  Side(std::uint32_t own, std::uint32_t peer) : credits(peer, own), posted(own) {}
  BufferCredits credits;
  std::uint32_t posted;            // receive buffers currently posted
  std::deque<std::uint32_t> held;  // received, not yet reposted (credits carried)
  int to_send = 0, data_sent = 0, data_received = 0;
};

void simulate(std::uint32_t na, std::uint32_t nb, int msgs_a, int msgs_b, unsigned seed) {
  std::mt19937 rng(seed);
  Side a(na, nb), b(nb, na);
  a.to_send = msgs_a;
  b.to_send = msgs_b;
  struct Msg {
    bool data;
    std::uint32_t credits;
  };
  std::deque<Msg> to_a, to_b;
  int idle_rounds = 0;
  for (int step = 0; step < 2000000; ++step) {
    bool progressed = false;
    for (int who = 0; who < 2; ++who) {
      Side& s = who == 0 ? a : b;
      Side& peer = who == 0 ? b : a;
      auto& out = who == 0 ? to_b : to_a;
      auto& in = who == 0 ? to_a : to_b;
      switch (rng() % 3) {
        case 0:  // send data if allowed
          if (s.data_sent < s.to_send && s.credits.can_send_data()) {
            out.push_back({true, s.credits.on_send()});
            ++s.data_sent;
            progressed = true;
          } else if (s.credits.credit_message_due()) {
            out.push_back({false, s.credits.on_send()});
            progressed = true;
          }
          break;
        case 1:  // deliver one message into a posted buffer
          if (!in.empty()) {
            ASSERT_GT(s.posted, 0u) << "receiver overrun (RNR) at step " << step;
            --s.posted;
            const Msg m = in.front();
            in.pop_front();
            ASSERT_TRUE(s.credits.on_returned(m.credits));
            s.held.push_back(1);
            if (m.data) ++s.data_received;
            progressed = true;
          }
          break;
        default:  // the receiving thread reposts a consumed buffer
          if (!s.held.empty()) {
            s.held.pop_front();
            ++s.posted;
            s.credits.on_reposted();
            progressed = true;
          }
          break;
      }
      (void)peer;
    }
    if (a.data_received == msgs_b && b.data_received == msgs_a && to_a.empty() && to_b.empty())
      return;
    idle_rounds = progressed ? 0 : idle_rounds + 1;
    ASSERT_LT(idle_rounds, 1000) << "credit deadlock: a sent " << a.data_sent << "/" << msgs_a
                                 << ", b sent " << b.data_sent << "/" << msgs_b;
  }
  FAIL() << "simulation did not finish";
}

TEST(VerbsCredits, NoOverrunNoDeadlockBothDirections) {
  for (unsigned seed = 1; seed <= 20; ++seed) simulate(8, 8, 2000, 2000, seed);
}

TEST(VerbsCredits, NoDeadlockOneWayAndUnequalBuffers) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    simulate(4, 32, 3000, 0, seed);
    simulate(32, 4, 0, 3000, seed);
    simulate(5, 7, 1000, 10, seed);
  }
}

TEST(VerbsWire, ImmediateDataAndPrivateDataRoundTrip) {
  const std::uint32_t imm = encode_imm(SendKind::kFin, 0x1234);
  EXPECT_EQ(imm_kind(imm), SendKind::kFin);
  EXPECT_EQ(imm_credits(imm), 0x1234u);
  std::string why;
  const auto pd = encode_params({32, 65536, std::nullopt});
  const auto back = decode_params(pd.data(), pd.size(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->recv_buffers, 32u);
  EXPECT_EQ(back->buffer_size, 65536u);
  EXPECT_FALSE(back->hello);
  EXPECT_FALSE(decode_params(pd.data(), pd.size() - 1, &why));
  auto bad = pd;
  bad[0] = std::byte{0};
  EXPECT_FALSE(decode_params(bad.data(), bad.size(), &why)) << "not a zipper verbs peer";
  EXPECT_NE(why.find("not a zipper verbs endpoint"), std::string::npos) << why;
  bad = pd;
  bad[4] = std::byte{2};  // version 2 (np_low/np_high)
  EXPECT_FALSE(decode_params(bad.data(), bad.size(), &why));
  EXPECT_NE(why.find("version 2, this side speaks 3"), std::string::npos) << why;
  EXPECT_FALSE(decode_params(nullptr, 0, &why));
}

TEST(VerbsWire, HelloTravelsInThePrivateData) {
  // Largest values where the fields allow, so every byte of the layout is
  // exercised: six sites (what fits), the rank the last of the last site.
  const ConnectHello h{0xFEDCBA9876543210ull, 0xFFFFF8, 5, {1, 2, 3, 4, 0x7FFFF0, 0x7FFFFF}};
  static_assert(kConnParamsSize <= 56, "fits a RoCE/IB connect request");
  static_assert(kParamSites == 6);
  ASSERT_TRUE(hello_fits(h));
  const auto pd = encode_params({16, 4096, h});
  std::string why;
  const auto back = decode_params(pd.data(), pd.size(), &why);
  ASSERT_TRUE(back) << why;
  ASSERT_TRUE(back->hello);
  EXPECT_EQ(back->hello->job_id, h.job_id);
  EXPECT_EQ(back->hello->vrank, h.vrank);
  EXPECT_EQ(back->hello->site, 5u);
  EXPECT_EQ(back->hello->site_ranks, h.site_ranks);
  EXPECT_EQ(back->recv_buffers, 16u);
  EXPECT_EQ(back->buffer_size, 4096u);
  EXPECT_EQ(static_cast<unsigned>(pd[17]), 5u) << "site byte";
  EXPECT_EQ(static_cast<unsigned>(pd[18]), 6u) << "sites byte";
  // Two sites, the common case, round trip as well.
  const ConnectHello two{7, 3, 1, {2, 6}};
  const auto pd2 = encode_params({16, 4096, two});
  const auto back2 = decode_params(pd2.data(), pd2.size(), &why);
  ASSERT_TRUE(back2 && back2->hello) << why;
  EXPECT_EQ(back2->hello->site_ranks, two.site_ranks);
  EXPECT_EQ(back2->hello->site, 1u);

  // A table of 7 sites does not fit: no hello in the private data (the
  // client sends a HELLO frame instead).
  const ConnectHello seven{7, 0, 0, {1, 1, 1, 1, 1, 1, 1}};
  EXPECT_FALSE(hello_fits(seven));
  const auto pd7 = encode_params({16, 4096, seven});
  const auto back7 = decode_params(pd7.data(), pd7.size(), &why);
  ASSERT_TRUE(back7) << why;
  EXPECT_FALSE(back7->hello);

  // Inconsistent hellos are refused with a reason.
  const auto outside = encode_params({16, 4096, ConnectHello{7, 4, 1, {2, 2}}});
  EXPECT_FALSE(decode_params(outside.data(), outside.size(), &why));
  EXPECT_NE(why.find("rank 4 is not in site 1 (world ranks 2..3)"), std::string::npos) << why;
  const auto empty = encode_params({16, 4096, ConnectHello{7, 0, 0, {0, 1}}});
  EXPECT_FALSE(decode_params(empty.data(), empty.size(), &why));
  EXPECT_NE(why.find("site 0 of the site table has 0 ranks"), std::string::npos) << why;
  auto wrong_site = encode_params({16, 4096, ConnectHello{7, 1, 0, {2, 2}}});  // rank 1: site 0
  wrong_site[17] = std::byte{1};
  EXPECT_FALSE(decode_params(wrong_site.data(), wrong_site.size(), &why));
  EXPECT_NE(why.find("rank 1 is not in site 1"), std::string::npos) << why;
  auto too_many = encode_params({16, 4096, two});
  too_many[18] = std::byte{7};  // 7 sites claimed: more than the private data holds
  EXPECT_FALSE(decode_params(too_many.data(), too_many.size(), &why));
  EXPECT_NE(why.find("a site table of 7 sites"), std::string::npos) << why;
}

TEST(VerbsWire, RejectReasonRoundTripsAndIsTruncatedToFit) {
  std::size_t len = 0;
  const auto r = encode_reject("hello: rank 9 outside the layout 2+2", &len);
  ASSERT_LE(len, kRejectMax);
  // The CM pads the private data with zeros up to its fixed size.
  std::array<std::byte, kRejectMax> padded{};
  std::copy(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(len), padded.begin());
  EXPECT_EQ(decode_reject(padded.data(), padded.size()), "hello: rank 9 outside the layout 2+2");
  const std::string longer(200, 'x');
  const auto r2 = encode_reject(longer, &len);
  EXPECT_EQ(len, kRejectMax);
  EXPECT_EQ(decode_reject(r2.data(), len), std::string(kRejectMax - 4, 'x'));
  EXPECT_FALSE(decode_reject(nullptr, 0));
  const std::array<std::byte, 8> plain{};
  EXPECT_FALSE(decode_reject(plain.data(), plain.size())) << "a plain reject has no reason";
}

// Sets `key` to `text` in *c; the error text when refused ("" if accepted).
std::string set_one(Config* c, const char* key, const char* text) { return set(c, key, text); }

TEST(VerbsConfig, DefaultsAreTheDocumentedOnes) {
  const Config d;
  EXPECT_EQ(d.recv_buffers, 32u);
  EXPECT_EQ(d.buffer_size, 65536u);
  EXPECT_EQ(d.send_slots, 32u);
  EXPECT_EQ(d.inline_max, 128u);
  EXPECT_EQ(d.zcopy_min, 262144u);
  EXPECT_EQ(d.write_min, 131072u);
  EXPECT_EQ(d.ack_timeout, 17);
  EXPECT_EQ(d.keepalive_ms, 1000u);
  EXPECT_EQ(d.spin_us, 10u);
  EXPECT_FALSE(d.busy_poll);
  EXPECT_EQ(d.resolve_timeout_ms, 2000);
  EXPECT_EQ(d.srq_threshold, 32u);
  EXPECT_EQ(d.srq_credits, 16u);
  EXPECT_GE(d.srq_credits, kMinBuffers);
  EXPECT_EQ(d.srq_max_wr, 16384u);
  EXPECT_EQ(d.source, "");
  // Every row's stated default is what value_of reads from a default Config,
  // and set() takes it back unchanged.
  for (const auto& row : settings()) {
    EXPECT_EQ(value_of(d, row.key), row.fallback) << row.key;
    Config c;
    EXPECT_EQ(set(&c, row.key, row.fallback), "") << row.key;
    EXPECT_EQ(value_of(c, row.key), row.fallback) << row.key;
  }
}

TEST(VerbsConfig, RowsAreUniqueAndNamedAlike) {
  std::set<std::string> keys, envs;
  for (const auto& row : settings()) {
    EXPECT_TRUE(keys.insert(row.key).second) << row.key;
    EXPECT_TRUE(envs.insert(row.env).second) << row.env;
    std::string upper = row.key;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    EXPECT_EQ(row.env, "ZIPPER_VERBS_" + upper);
  }
  EXPECT_EQ(keys.size(), 15u);
}

TEST(VerbsConfig, SetsValuesAndRefusesBadOnes) {
  Config c;
  EXPECT_EQ(set_one(&c, "recv_buffers", "64"), "");
  EXPECT_EQ(set_one(&c, "poll", "busy"), "");
  EXPECT_EQ(c.recv_buffers, 64u);
  EXPECT_TRUE(c.busy_poll);
  // Below the protocol minimum: refused, the value kept.
  EXPECT_EQ(set_one(&c, "recv_buffers", "2"), "expected an integer from 4 to 4096, got '2'");
  EXPECT_EQ(c.recv_buffers, 64u);
  EXPECT_EQ(set_one(&c, "poll", "sometimes"), "expected 'adaptive' or 'busy', got 'sometimes'");
  EXPECT_TRUE(c.busy_poll);
  EXPECT_EQ(set_one(&c, "poll", "adaptive"), "");
  EXPECT_FALSE(c.busy_poll);
  EXPECT_EQ(set_one(&c, "colour", "blue"), "no verbs setting 'colour'");
  EXPECT_THROW(value_of(c, "colour"), std::invalid_argument);
}

TEST(VerbsConfig, TimeoutsAndSizesAreBounded) {
  Config c;
  EXPECT_EQ(set_one(&c, "ack_timeout", "14"), "");
  EXPECT_EQ(set_one(&c, "keepalive_ms", "0"), "");
  EXPECT_EQ(set_one(&c, "write_min", "0"), "");
  EXPECT_EQ(c.ack_timeout, 14);
  EXPECT_EQ(c.keepalive_ms, 0u);
  EXPECT_EQ(c.write_min, 0u);
  EXPECT_NE(set_one(&c, "ack_timeout", "32"), "");  // the IB field has 5 bits
  EXPECT_EQ(c.ack_timeout, 14);
  EXPECT_NE(set_one(&c, "buffer_size", "64"), "");  // smaller than a frame header + payload
  EXPECT_NE(set_one(&c, "buffer_size", "65536x"), "");
  EXPECT_NE(set_one(&c, "buffer_size", "-1"), "");
  EXPECT_NE(set_one(&c, "buffer_size", ""), "");
  EXPECT_NE(set_one(&c, "resolve_ms", "9"), "");
  EXPECT_EQ(set_one(&c, "resolve_ms", "600000"), "");
  EXPECT_EQ(c.resolve_timeout_ms, 600000);
  EXPECT_EQ(c.buffer_size, 65536u);
}

TEST(VerbsConfig, SrqKnobs) {
  Config c;
  EXPECT_EQ(set_one(&c, "srq_threshold", "0"), "");  // every link on the SRQ
  EXPECT_EQ(set_one(&c, "srq_credits", "8"), "");
  EXPECT_EQ(set_one(&c, "srq_max_wr", "1024"), "");
  EXPECT_EQ(c.srq_threshold, 0u);
  EXPECT_EQ(c.srq_credits, 8u);
  EXPECT_EQ(c.srq_max_wr, 1024u);
  // The credit reserve rule needs 4.
  EXPECT_EQ(set_one(&c, "srq_credits", "3"), "expected an integer from 4 to 4096, got '3'");
  EXPECT_EQ(c.srq_credits, 8u);
}

TEST(VerbsConfig, SourceMustBeAnIpv4Address) {
  Config c;
  EXPECT_EQ(set_one(&c, "source", "10.1.0.1"), "");
  EXPECT_EQ(c.source, "10.1.0.1");
  EXPECT_EQ(set_one(&c, "source", "rxeA"), "expected an IPv4 address, got 'rxeA'");
  EXPECT_EQ(c.source, "10.1.0.1");
  EXPECT_EQ(set_one(&c, "source", ""), "");  // back to the address on the destination's subnet
  EXPECT_EQ(c.source, "");
}

// Only the connecting side reads these: zipperd, which only accepts, offers
// no key for them.
TEST(VerbsConfig, ConnectOnlyRows) {
  std::set<std::string> connect_only;
  for (const auto& row : settings())
    if (row.connect_only) connect_only.insert(row.key);
  EXPECT_EQ(connect_only, (std::set<std::string>{"poll", "source", "resolve_ms"}));
}

bool host_has_rdma_device() {
  // Same view libibverbs has: devices registered under /sys/class/infiniband.
  return std::system("ls /sys/class/infiniband/* >/dev/null 2>&1") == 0;
}

TEST(VerbsLink, NoRdmaDeviceGivesClearErrorAndNoTcpFallback) {
  if (host_has_rdma_device()) GTEST_SKIP() << "this host has an RDMA device";
  std::string why;
  auto ep = parse_endpoint("verbs:127.0.0.1:7471", &why);
  ASSERT_TRUE(ep) << why;
  EXPECT_EQ(ep->scheme, "verbs");
  for (int which = 0; which < 2; ++which) {
    try {
      if (which == 0)
        listen(*ep);
      else
        connect(*ep, 100);
      FAIL() << "a link was created for a verbs address without an RDMA device";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("verbs:127.0.0.1:7471"), std::string::npos) << msg;
#ifdef ZIPPER_HAVE_VERBS
      EXPECT_NE(msg.find("no RDMA device"), std::string::npos) << msg;
#else
      EXPECT_NE(msg.find("not available in this build"), std::string::npos) << msg;
#endif
    }
  }
}

}  // namespace
