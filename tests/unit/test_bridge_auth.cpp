// Bridge-to-bridge authentication (proto/bridge_auth.h): two bridges that
// pin each other's host key agree; an unpinned bridge, one claiming a pinned
// key without its private half, a replayed answer and a relayed one are
// refused.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "proto/bridge_auth.h"
#include "proto/host_key.h"

namespace {

using namespace zipper::proto::auth;

ChallengePayload challenge_of(const HostKey& listener) {
  return {random_nonce(), listener.public_key()};
}

const LinkEnds kEnds{"10.202.0.254:40000", "10.202.0.253:7470"};

TEST(BridgeAuth, PinnedBridgesAgreeOnOneKey) {
  HostKey ab, bc;  // bridges A|B (dials) and B|C (listens)
  const auto c = challenge_of(bc);
  Key dialer_key{}, listener_key{};
  const auto a = prove_bridge(ab, c, kEnds, &dialer_key);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dialer_key, ab.public_key());
  // Through the wire encoding.
  std::array<std::byte, kBridgeAuthSize> wire{};
  encode_bridge_auth(*a, wire);
  BridgeAuth got;
  ASSERT_TRUE(decode_bridge_auth(wire, &got));
  EXPECT_FALSE(decode_bridge_auth(std::span(wire).first(kBridgeAuthSize - 1), &got));
  ASSERT_TRUE(decode_bridge_auth(wire, &got));
  const std::vector<Key> pins{Key{}, ab.public_key()};
  EXPECT_EQ(check_bridge(bc, pins, c, got, kEnds, &listener_key), "");
  EXPECT_EQ(listener_key, dialer_key);
  // The listener's confirmation checks at the dialer, and not under another key.
  const Tag confirm = bridge_confirm(listener_key, got.tag);
  EXPECT_TRUE(check_bridge_confirm(dialer_key, a->tag, confirm));
  HostKey other;
  Key wrong{};
  ASSERT_TRUE(prove_bridge(other, c, kEnds, &wrong));
  EXPECT_FALSE(check_bridge_confirm(wrong, a->tag, confirm));
}

TEST(BridgeAuth, UnpinnedBridgeIsRefused) {
  HostKey ab, bc, stranger;
  const auto c = challenge_of(bc);
  Key k{};
  const auto a = prove_bridge(stranger, c, kEnds, &k);
  ASSERT_TRUE(a);
  const std::vector<Key> pins{ab.public_key()};
  const std::string why = check_bridge(bc, pins, c, *a, kEnds, &k);
  EXPECT_NE(why.find("is not pinned here (--peer-key)"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(BridgeAuth, PinnedKeyWithoutItsPrivateHalfIsRefused) {
  // The attacker knows A|B's public key (it is public) and claims it, but
  // can only derive a link key from its own private half.
  HostKey ab, bc, attacker;
  const auto c = challenge_of(bc);
  Key k{};
  auto a = prove_bridge(attacker, c, kEnds, &k);
  ASSERT_TRUE(a);
  a->dialer_key = ab.public_key();
  const std::vector<Key> pins{ab.public_key()};
  EXPECT_EQ(check_bridge(bc, pins, c, *a, kEnds, &k),
            "bridge authentication failed: the tag does not prove the pinned key for this "
            "connection");
}

TEST(BridgeAuth, AnswerIsBoundToItsChallengeAndConnection) {
  HostKey ab, bc;
  const std::vector<Key> pins{ab.public_key()};
  const auto c = challenge_of(bc);
  Key k{};
  const auto a = prove_bridge(ab, c, kEnds, &k);
  ASSERT_TRUE(a);
  // Replayed on a fresh challenge.
  EXPECT_NE(check_bridge(bc, pins, challenge_of(bc), *a, kEnds, &k), "");
  // Relayed through another connection (other ends).
  EXPECT_NE(check_bridge(bc, pins, c, *a, LinkEnds{"10.202.0.9:5", kEnds.listener}, &k), "");
  // Meant for another listener.
  HostKey cd;
  EXPECT_EQ(check_bridge(cd, pins, c, *a, kEnds, &k),
            "bridge authentication answers another host key's challenge");
  // A flipped bit in the tag.
  auto bad = *a;
  bad.tag[0] ^= std::byte{1};
  EXPECT_NE(check_bridge(bc, pins, c, bad, kEnds, &k), "");
  EXPECT_EQ(check_bridge(bc, pins, c, *a, kEnds, &k), "");
}

}  // namespace
