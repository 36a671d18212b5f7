#include "site_hello.h"

namespace zipper::proto {
namespace {

void put32(std::byte* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
std::uint32_t get32(const std::byte* b) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::to_integer<std::uint32_t>(b[i]) << (8 * i);
  return v;
}

}  // namespace

std::string check_site_table(const std::vector<std::uint32_t>& site_ranks, std::uint32_t world,
                             std::uint32_t site, std::uint32_t vrank) {
  const std::size_t n = site_ranks.size();
  if (n == 0) return "the site table has 0 sites";
  if (n > kMaxHelloSites)
    return "the site table has " + std::to_string(n) + " sites, more than " +
           std::to_string(kMaxHelloSites);
  // At most 64 terms below 2^32 each: the 64-bit sum cannot wrap.
  std::uint64_t total = 0, first = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (site_ranks[s] == 0) return "site " + std::to_string(s) + " of the site table has 0 ranks";
    if (s == site) first = total;
    total += site_ranks[s];
  }
  if (total > kMaxHelloRanks)
    return "the site table's " + std::to_string(total) + " ranks exceed " +
           std::to_string(kMaxHelloRanks);
  if (total != world)
    return "the site table's " + std::to_string(total) + " ranks disagree with the world size " +
           std::to_string(world);
  if (site >= n)
    return "site " + std::to_string(site) + " is not in the table of " + std::to_string(n) +
           " sites";
  if (vrank < first || vrank >= first + site_ranks[site])
    return "rank " + std::to_string(vrank) + " is not in site " + std::to_string(site) +
           " (world ranks " + std::to_string(first) + ".." +
           std::to_string(first + site_ranks[site] - 1) + ")";
  return {};
}

bool encode_site_hello(const SiteHello& p, std::span<std::byte> out) {
  const std::size_t n = p.site_ranks.size();
  if (out.size() < site_hello_size(n)) return false;
  put32(&out[0], p.vrank);
  put32(&out[4], p.site);
  put32(&out[8], static_cast<std::uint32_t>(n));
  put32(&out[12], p.world);
  put32(&out[16], p.auth_len);
  for (std::size_t s = 0; s < n; ++s) put32(&out[20 + 4 * s], p.site_ranks[s]);
  return true;
}

std::vector<std::byte> encode_site_hello(const SiteHello& p) {
  std::vector<std::byte> out(site_hello_size(p.site_ranks.size()));
  encode_site_hello(p, out);
  return out;
}

bool decode_site_hello(std::span<const std::byte> in, SiteHello* out, std::string* why) {
  auto fail = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  // The fixed fields first (the count among them), so that a table of 0
  // sites is named as such.
  if (in.size() < site_hello_size(0))
    return fail("hello payload of " + std::to_string(in.size()) + " bytes, shorter than " +
                std::to_string(site_hello_size(0)));
  out->vrank = get32(&in[0]);
  out->site = get32(&in[4]);
  const std::uint32_t n = get32(&in[8]);
  out->world = get32(&in[12]);
  out->auth_len = get32(&in[16]);
  // The count is checked before anything is sized by it.
  if (n == 0) return fail("the site table has 0 sites");
  if (n > kMaxHelloSites)
    return fail("the site table has " + std::to_string(n) + " sites, more than " +
                std::to_string(kMaxHelloSites));
  const std::size_t fixed = site_hello_size(n);
  if (in.size() < fixed || in.size() - fixed != out->auth_len)
    return fail("hello payload of " + std::to_string(in.size()) + " bytes for " +
                std::to_string(n) + " sites and a proof of " + std::to_string(out->auth_len) +
                " bytes");
  out->site_ranks.resize(n);
  for (std::size_t s = 0; s < n; ++s) out->site_ranks[s] = get32(&in[20 + 4 * s]);
  if (std::string bad = check_site_table(out->site_ranks, out->world, out->site, out->vrank);
      !bad.empty())
    return fail(std::move(bad));
  return true;
}

std::string version_mismatch(std::uint16_t peer_version, std::uint16_t own_version,
                             const std::string& peer, const std::string& self) {
  return peer + " speaks zipper protocol version " + std::to_string(peer_version) + ", this " +
         self + " speaks " + std::to_string(own_version) +
         ": run libmmpi and zipperd of the same release";
}

std::string check_sites_joined(std::size_t declared, std::size_t joined) {
  if (declared <= joined) return {};
  return "this zipperd joins " + std::to_string(joined) + " sites; the job declares " +
         std::to_string(declared);
}

std::string layout_text(const std::vector<std::uint32_t>& site_ranks) {
  std::string out;
  for (std::uint32_t r : site_ranks) out += (out.empty() ? "" : "+") + std::to_string(r);
  return out;
}

}  // namespace zipper::proto
