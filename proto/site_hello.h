// The HELLO of wire protocol 2 (frame.h kVersion): a rank's site and the
// job's site table (ranks per site, in world-rank order), which replaced
// protocol 1's two-group layout np_low/np_high. The codec and its checks,
// the one line a peer of the other version gets, and a bridge's check of
// the sites it joins (docs/sites.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zipper::proto {

/// The protocol version whose HELLO is a SiteHello.
inline constexpr std::uint16_t kSiteHelloVersion = 2;
/// Most sites a HELLO's site table may hold.
inline constexpr std::uint32_t kMaxHelloSites = 64;
/// Most world ranks over all sites (virtual ranks are below 2^24).
inline constexpr std::uint64_t kMaxHelloRanks = std::uint64_t{1} << 24;

/// HELLO payload of protocol 2, all u32 little-endian:
///   0 vrank | 4 site | 8 sites (n) | 12 world | 16 auth_len |
///   20 ranks of site 0 .. site n-1 (4 n bytes) | auth_len bytes of proof.
/// Site s holds the world ranks after those of sites 0..s-1; the sender is
/// world rank `vrank` in site `site`.
struct SiteHello {
  std::uint32_t vrank = 0;
  std::uint32_t site = 0;                 // the sender's site
  std::uint32_t world = 0;                // world ranks: the sum of site_ranks
  std::vector<std::uint32_t> site_ranks;  // ranks per site, in world-rank order
  std::uint32_t auth_len = 0;             // bytes of proof that follow
};
/// Bytes of a protocol-2 HELLO of `sites` sites before its proof.
inline constexpr std::size_t site_hello_size(std::size_t sites) { return 20 + 4 * sites; }
/// The smallest protocol-2 HELLO payload (one site).
inline constexpr std::size_t kSiteHelloMinSize = site_hello_size(1);

/// Checks a site table and a rank in it: 1..kMaxHelloSites sites, none of
/// 0 ranks, their sum equal to `world` and at most kMaxHelloRanks, `site`
/// one of them and `vrank` one of its ranks. Returns an error text naming
/// the fault, or empty.
std::string check_site_table(const std::vector<std::uint32_t>& site_ranks, std::uint32_t world,
                             std::uint32_t site, std::uint32_t vrank);

/// Writes the first site_hello_size(p.site_ranks.size()) bytes of `out`
/// (the proof, if any, follows); returns false, writing nothing, when `out`
/// is shorter.
bool encode_site_hello(const SiteHello& p, std::span<std::byte> out);
/// The whole payload of `p` without a proof (p.auth_len must be 0).
std::vector<std::byte> encode_site_hello(const SiteHello& p);
/// Decodes a protocol-2 HELLO payload and checks it (lengths, then
/// check_site_table). Returns false and sets *why (when not null) on any
/// fault; never reads past `in`, never allocates by an unchecked count.
bool decode_site_hello(std::span<const std::byte> in, SiteHello* out, std::string* why = nullptr);

/// The one line naming both versions when the peer speaks `peer_version`
/// and this end `own_version`, e.g. "zipperd at H:P speaks zipper protocol
/// version 1, this libmmpi speaks 2: run libmmpi and zipperd of the same
/// release". `peer`/`self` name the two ends.
std::string version_mismatch(std::uint16_t peer_version, std::uint16_t own_version,
                             const std::string& peer, const std::string& self);

/// The refusal of a zipperd whose `joined` legs each serve one site (site s
/// on leg s) when a HELLO declares `declared` sites: empty when the legs
/// reach every one of them (declared <= joined), else e.g. "this zipperd
/// joins 2 sites; the job declares 3".
std::string check_sites_joined(std::size_t declared, std::size_t joined);

/// A site table as text, the sites' ranks joined by '+': "4+4+2".
std::string layout_text(const std::vector<std::uint32_t>& site_ranks);

}  // namespace zipper::proto
