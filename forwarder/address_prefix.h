// The network prefix a client address belongs to, for --max-jobs-per-prefix:
// one user with many addresses of one subnet (127.0.0.2-5, a
// node's aliases, a /64 of IPv6 addresses) counts once, as Slurm and systemd
// count per user and cgroup rather than per source address.
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace zipper::forwarder {

/// "A.B.C.0/24" (or the IPv6 prefix "H:H::/64") of `address`, an IP address
/// with or without "tcp:" and ":PORT" ("tcp:10.1.2.3:4567", "[fe80::1]:7470", "::1");
/// `v4_bits` 1..32 and `v6_bits` 1..128 bits are kept. "" when `address` is
/// not an IP address (a verbs peer name, say): no prefix limit applies.
inline std::string address_prefix(std::string address, unsigned v4_bits, unsigned v6_bits) {
  if (address.rfind("tcp:", 0) == 0) address.erase(0, 4);  // a link's peer() names its scheme
  if (!address.empty() && address.front() == '[') {
    const auto close = address.find(']');
    if (close == std::string::npos) return "";
    address = address.substr(1, close - 1);
  } else if (address.find(':') == address.rfind(':') && address.find(':') != std::string::npos) {
    address.resize(address.find(':'));  // IPv4 with a port (one colon)
  }
  unsigned char bytes[16] = {};
  int family = AF_INET;
  unsigned bits = v4_bits, len = 4;
  if (::inet_pton(AF_INET, address.c_str(), bytes) != 1) {
    if (::inet_pton(AF_INET6, address.c_str(), bytes) != 1) return "";
    family = AF_INET6;
    bits = v6_bits;
    len = 16;
  }
  if (bits > len * 8) bits = len * 8;
  for (unsigned i = 0; i < len; ++i) {
    const unsigned keep = bits >= (i + 1) * 8 ? 8 : bits > i * 8 ? bits - i * 8 : 0;
    bytes[i] &= static_cast<unsigned char>(0xff00u >> keep);
  }
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family, bytes, text, sizeof text);
  return std::string(text) + "/" + std::to_string(bits);
}

}  // namespace zipper::forwarder
