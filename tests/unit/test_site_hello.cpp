// The HELLO of wire protocol 2 (proto/site_hello.h): the site table round
// trip, every malformed table refused, the version line and the
// two-site bridge's refusal.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proto/site_hello.h"

namespace {

using namespace zipper::proto;  // NOLINT: the codec under test

SiteHello hello_of(std::vector<std::uint32_t> table, std::uint32_t site, std::uint32_t vrank) {
  SiteHello h;
  h.vrank = vrank;
  h.site = site;
  for (std::uint32_t r : table) h.world += r;
  h.site_ranks = std::move(table);
  return h;
}

void expect_round_trip(const SiteHello& h) {
  const std::vector<std::byte> bytes = encode_site_hello(h);
  ASSERT_EQ(bytes.size(), site_hello_size(h.site_ranks.size()));
  SiteHello d;
  std::string why;
  ASSERT_TRUE(decode_site_hello(bytes, &d, &why)) << why;
  EXPECT_EQ(d.vrank, h.vrank);
  EXPECT_EQ(d.site, h.site);
  EXPECT_EQ(d.world, h.world);
  EXPECT_EQ(d.site_ranks, h.site_ranks);
  EXPECT_EQ(d.auth_len, 0u);
}

TEST(SiteHello, RoundTripTwoAndThreeSites) {
  expect_round_trip(hello_of({3, 5}, 0, 2));
  expect_round_trip(hello_of({3, 5}, 1, 3));
  expect_round_trip(hello_of({3, 5}, 1, 7));
  expect_round_trip(hello_of({4, 4, 2}, 2, 9));
  expect_round_trip(hello_of({4, 4, 2}, 1, 4));
}

TEST(SiteHello, LittleEndianLayout) {
  const auto b = encode_site_hello(hello_of({0x0102, 0x030405}, 1, 0x0102));
  ASSERT_EQ(b.size(), 28u);
  EXPECT_EQ(b[0], std::byte{0x02});  // vrank
  EXPECT_EQ(b[1], std::byte{0x01});
  EXPECT_EQ(b[4], std::byte{1});      // site
  EXPECT_EQ(b[8], std::byte{2});      // sites
  EXPECT_EQ(b[12], std::byte{0x07});  // world 0x030507
  EXPECT_EQ(b[13], std::byte{0x05});
  EXPECT_EQ(b[14], std::byte{0x03});
  EXPECT_EQ(b[20], std::byte{0x02});  // site 0's ranks
  EXPECT_EQ(b[24], std::byte{0x05});  // site 1's ranks
  EXPECT_EQ(b[26], std::byte{0x03});
}

TEST(SiteHello, ProofFollowsTheTable) {
  SiteHello h = hello_of({2, 2, 2}, 0, 1);
  h.auth_len = 5;
  std::vector<std::byte> buf(site_hello_size(3) + 5, std::byte{0x5C});
  ASSERT_TRUE(encode_site_hello(h, buf));
  SiteHello d;
  std::string why;
  ASSERT_TRUE(decode_site_hello(buf, &d, &why)) << why;
  EXPECT_EQ(d.auth_len, 5u);
  EXPECT_EQ(buf.back(), std::byte{0x5C});  // the proof is not written over
  // A proof length that disagrees with the payload is refused.
  buf.pop_back();
  EXPECT_FALSE(decode_site_hello(buf, &d, &why));
  EXPECT_NE(why.find("proof of 5 bytes"), std::string::npos) << why;
  // Too small a buffer: nothing written.
  std::vector<std::byte> small(site_hello_size(3) - 1, std::byte{0x11});
  EXPECT_FALSE(encode_site_hello(h, small));
  for (std::byte v : small) EXPECT_EQ(v, std::byte{0x11});
}

// Each malformed table is refused with a message naming the fault.
TEST(SiteHello, MalformedTablesAreRefused) {
  struct Case {
    SiteHello h;
    const char* says;
  };
  SiteHello overflow = hello_of({0xFFFFFFFF, 0xFFFFFFFF}, 0, 0);
  overflow.world = 0xFFFFFFFE;  // what a wrapping sum would give
  SiteHello big = hello_of({1u << 23, (1u << 23) + 1}, 0, 0);
  SiteHello disagree = hello_of({2, 2}, 0, 0);
  disagree.world = 5;
  const std::vector<Case> cases = {
      {hello_of({}, 0, 0), "0 sites"},
      {hello_of({2, 0, 3}, 0, 0), "site 1 of the site table has 0 ranks"},
      {overflow, "exceed"},
      {big, "exceed"},
      {disagree, "disagree with the world size 5"},
      {hello_of(std::vector<std::uint32_t>(kMaxHelloSites + 1, 1), 0, 0), "more than 64"},
      {hello_of({2, 2}, 2, 0), "site 2 is not in the table"},
      {hello_of({2, 2}, 1, 1), "rank 1 is not in site 1 (world ranks 2..3)"},
      {hello_of({2, 2}, 0, 2), "rank 2 is not in site 0"},
  };
  for (const Case& c : cases) {
    std::vector<std::byte> bytes(site_hello_size(c.h.site_ranks.size()));
    ASSERT_TRUE(encode_site_hello(c.h, bytes));
    SiteHello d;
    std::string why;
    EXPECT_FALSE(decode_site_hello(bytes, &d, &why)) << c.says;
    EXPECT_NE(why.find(c.says), std::string::npos) << "got: " << why;
  }
  // 64 sites (the cap) pass.
  expect_round_trip(hello_of(std::vector<std::uint32_t>(kMaxHelloSites, 1), 63, 63));
}

// A count that would size an allocation is checked first; short input is
// refused at every length.
TEST(SiteHello, HostileLengthsAreRefused) {
  std::vector<std::byte> b = encode_site_hello(hello_of({1, 1}, 0, 0));
  for (std::size_t n = 0; n < b.size(); ++n) {
    SiteHello d;
    EXPECT_FALSE(decode_site_hello(std::span<const std::byte>(b.data(), n), &d)) << n;
  }
  b[8] = std::byte{0xFF};  // 0xFFFF'FF02 sites claimed
  b[9] = std::byte{0xFF};
  b[10] = std::byte{0xFF};
  b[11] = std::byte{0xFF};
  SiteHello d;
  std::string why;
  EXPECT_FALSE(decode_site_hello(b, &d, &why));
  EXPECT_NE(why.find("more than 64"), std::string::npos) << why;
  EXPECT_TRUE(d.site_ranks.empty());
}

TEST(SiteHello, VersionMismatchIsOneLineNamingBoth) {
  const std::string old_client = version_mismatch(1, 2, "the rank at 10.0.0.5:40000", "zipperd");
  EXPECT_EQ(old_client,
            "the rank at 10.0.0.5:40000 speaks zipper protocol version 1, this zipperd speaks 2: "
            "run libmmpi and zipperd of the same release");
  const std::string old_zipperd = version_mismatch(1, 2, "zipperd at 10.0.0.1:7470", "libmmpi");
  EXPECT_NE(old_zipperd.find("version 1"), std::string::npos);
  EXPECT_NE(old_zipperd.find("speaks 2"), std::string::npos);
  EXPECT_EQ(old_zipperd.find('\n'), std::string::npos);
}

// A bridge whose legs are sites reaches a job's sites when it has a leg
// for each: fewer sites use the first legs, more are refused.
TEST(SiteHello, BridgeRefusesMoreSitesThanLegs) {
  EXPECT_EQ(check_sites_joined(2, 2), "");
  EXPECT_EQ(check_sites_joined(3, 3), "");
  EXPECT_EQ(check_sites_joined(2, 3), "");
  EXPECT_EQ(check_sites_joined(3, 2), "this zipperd joins 2 sites; the job declares 3");
  EXPECT_EQ(check_sites_joined(64, 3), "this zipperd joins 3 sites; the job declares 64");
}

TEST(SiteHello, LayoutText) {
  EXPECT_EQ(layout_text({4, 4, 2}), "4+4+2");
  EXPECT_EQ(layout_text({1}), "1");
  EXPECT_EQ(layout_text({}), "");
}

}  // namespace
