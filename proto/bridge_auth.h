// Bridge-to-bridge authentication: two zipperds that pin each other's host
// key (zipperd --peer-key, docs/sites.md) prove to each other that each
// holds its private half. No job secret is involved: a bridge relays a job's
// frames to another bridge without ever holding the job's secret.
//
//   dialer   --HELLO-->                                              listener
//   dialer   <--CHALLENGE (nonce, listener's host key)--------------
//            the dialer checks the host key against its pin
//   dialer   --BRIDGE AUTH (dialer's host key, dialer nonce, tag)-->
//            the listener checks the dialer's key against its pins and
//            the tag under the link key (crypto_kx of the two host keys)
//   dialer   <--HELLO_ACK (confirmation: a tag over the dialer's tag)--
//            which only the holder of the listener's private half makes
//
// The tag covers both nonces, both keys and the connection's two ends, so a
// recorded answer fails on any other connection or challenge.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "auth.h"

namespace zipper::proto::auth {

class HostKey;

/// The dialing bridge's answer to a CHALLENGE.
struct BridgeAuth {
  Key dialer_key{};  // the dialer's public host key (what the listener pins)
  Nonce dialer_nonce{};
  Tag tag{};
};
inline constexpr std::size_t kBridgeAuthSize = kKeySize + kNonceSize + kTagSize;

void encode_bridge_auth(const BridgeAuth& a, std::span<std::byte, kBridgeAuthSize> out);
/// False for a payload of another size.
bool decode_bridge_auth(std::span<const std::byte> in, BridgeAuth* out);

/// The two ends of the connection as "IP:PORT" text, each as that end
/// sees itself and the other (the dialer's local end is the listener's peer).
struct LinkEnds {
  std::string_view dialer;
  std::string_view listener;
};

/// Dialer: the answer to `c` (whose server key the caller checked against
/// its pin) and, in *link_key, the key the confirmation is checked with.
/// nullopt when the challenge's key is not a valid public key.
std::optional<BridgeAuth> prove_bridge(const HostKey& own, const ChallengePayload& c,
                                       const LinkEnds& ends, Key* link_key);
/// Listener: "" when `a` answers `c` on this connection from a bridge whose
/// key is in `pinned` and which holds its private half (*link_key set);
/// else one line saying why (an unpinned key, a tag that does not check).
std::string check_bridge(const HostKey& own, std::span<const Key> pinned, const ChallengePayload& c,
                         const BridgeAuth& a, const LinkEnds& ends, Key* link_key);
/// Listener's confirmation for HELLO_ACK, and the dialer's check of it.
Tag bridge_confirm(const Key& link_key, const Tag& dialer_tag);
bool check_bridge_confirm(const Key& link_key, const Tag& dialer_tag, const Tag& confirm);

}  // namespace zipper::proto::auth
