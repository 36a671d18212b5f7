// Bridge-to-bridge authentication (bridge_auth.h).
#include "bridge_auth.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "host_key.h"

namespace zipper::proto::auth {

namespace {

const unsigned char* u8(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* u8(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

void put(std::vector<std::byte>& t, std::span<const std::byte> b) {
  t.insert(t.end(), b.begin(), b.end());
}

void put_text(std::vector<std::byte>& t, std::string_view s) {
  const std::size_t n = std::min<std::size_t>(s.size(), 255);
  t.push_back(static_cast<std::byte>(n));
  put(t, std::as_bytes(std::span(s.data(), n)));
}

// What the tag covers; the label keeps it apart from every job AUTH tag.
std::vector<std::byte> transcript(const ChallengePayload& c, const BridgeAuth& a,
                                  const LinkEnds& ends) {
  static constexpr std::string_view kLabel = "zipper-bridge-v1";
  std::vector<std::byte> t;
  put(t, std::as_bytes(std::span(kLabel.data(), kLabel.size())));
  put(t, c.nonce);
  put(t, c.server_key);
  put(t, a.dialer_key);
  put(t, a.dialer_nonce);
  put_text(t, ends.dialer);
  put_text(t, ends.listener);
  return t;
}

Tag hmac(const Key& key, std::span<const std::byte> text) {
  Tag tag;
  crypto_auth(u8(tag.data()), u8(text.data()), text.size(), u8(key.data()));
  return tag;
}

}  // namespace

void encode_bridge_auth(const BridgeAuth& a, std::span<std::byte, kBridgeAuthSize> out) {
  std::memcpy(out.data(), a.dialer_key.data(), kKeySize);
  std::memcpy(out.data() + kKeySize, a.dialer_nonce.data(), kNonceSize);
  std::memcpy(out.data() + kKeySize + kNonceSize, a.tag.data(), kTagSize);
}

bool decode_bridge_auth(std::span<const std::byte> in, BridgeAuth* out) {
  if (in.size() != kBridgeAuthSize) return false;
  std::memcpy(out->dialer_key.data(), in.data(), kKeySize);
  std::memcpy(out->dialer_nonce.data(), in.data() + kKeySize, kNonceSize);
  std::memcpy(out->tag.data(), in.data() + kKeySize + kNonceSize, kTagSize);
  return true;
}

std::optional<BridgeAuth> prove_bridge(const HostKey& own, const ChallengePayload& c,
                                       const LinkEnds& ends, Key* link_key) {
  const auto k = own.link_key(c.server_key, /*dialer=*/true);
  if (!k) return std::nullopt;
  BridgeAuth a;
  a.dialer_key = own.public_key();
  a.dialer_nonce = random_nonce();
  a.tag = hmac(*k, transcript(c, a, ends));
  *link_key = *k;
  return a;
}

std::string check_bridge(const HostKey& own, std::span<const Key> pinned, const ChallengePayload& c,
                         const BridgeAuth& a, const LinkEnds& ends, Key* link_key) {
  if (c.server_key != own.public_key())
    return "bridge authentication answers another host key's challenge";
  if (std::find(pinned.begin(), pinned.end(), a.dialer_key) == pinned.end())
    return "bridge key " + to_hex(a.dialer_key).substr(0, 16) +
           "... is not pinned here (--peer-key)";
  const auto k = own.link_key(a.dialer_key, /*dialer=*/false);
  if (!k) return "bridge key " + to_hex(a.dialer_key).substr(0, 16) + "... is not a valid key";
  const auto t = transcript(c, a, ends);
  if (crypto_auth_verify(u8(a.tag.data()), u8(t.data()), t.size(), u8(k->data())) != 0)
    return "bridge authentication failed: the tag does not prove the pinned key for this "
           "connection";
  *link_key = *k;
  return {};
}

Tag bridge_confirm(const Key& link_key, const Tag& dialer_tag) {
  static constexpr std::string_view kLabel = "zipper-bridge-confirm-v1";
  std::vector<std::byte> t;
  put(t, std::as_bytes(std::span(kLabel.data(), kLabel.size())));
  put(t, dialer_tag);
  return hmac(link_key, t);
}

bool check_bridge_confirm(const Key& link_key, const Tag& dialer_tag, const Tag& confirm) {
  const Tag want = bridge_confirm(link_key, dialer_tag);
  return sodium_memcmp(want.data(), confirm.data(), want.size()) == 0;
}

}  // namespace zipper::proto::auth
