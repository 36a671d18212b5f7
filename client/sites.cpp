#include "sites.h"

#include <algorithm>

namespace zipper::client {

SiteMap SiteMap::single(int world_size) {
  std::string why;
  auto m = make({static_cast<std::uint64_t>(world_size < 1 ? 1 : world_size)}, 0, &why);
  return *m;  // one positive site cannot be refused below kMaxWorldSize
}

std::optional<SiteMap> SiteMap::make(const std::vector<std::uint64_t>& ranks_per_site,
                                     int local_site, std::string* why) {
  const std::size_t n = ranks_per_site.size();
  if (n == 0) {
    *why = "the site table is empty (a job has at least one site)";
    return std::nullopt;
  }
  if (n > static_cast<std::size_t>(kMaxSites)) {
    *why = "the site table has " + std::to_string(n) + " sites; at most " +
           std::to_string(kMaxSites) + " are supported";
    return std::nullopt;
  }
  SiteMap m;
  std::uint64_t total = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const std::uint64_t r = ranks_per_site[s];
    if (r == 0) {
      *why = "site " + std::to_string(s) + " of the site table has 0 ranks";
      return std::nullopt;
    }
    // Both below 2^24 before the sum: it cannot wrap.
    if (r > kMaxWorldSize || total + r > kMaxWorldSize) {
      *why = "the site table's ranks exceed " + std::to_string(kMaxWorldSize) + " (at site " +
             std::to_string(s) + ")";
      return std::nullopt;
    }
    m.first_.push_back(static_cast<int>(total));
    m.ranks_.push_back(static_cast<int>(r));
    total += r;
  }
  if (local_site < 0 || static_cast<std::size_t>(local_site) >= n) {
    *why = "this process's site " + std::to_string(local_site) + " is not in the table of " +
           std::to_string(n) + " sites";
    return std::nullopt;
  }
  m.local_ = local_site;
  m.local_first_ = m.ranks_in(local_site).first;
  m.local_end_ = m.ranks_in(local_site).end;
  return m;
}

int SiteMap::site_of(int w) const {
  if (w < 0 || w >= world_size()) return -1;
  // The last site whose first rank is at most w.
  const auto it = std::upper_bound(first_.begin(), first_.end(), w);
  return static_cast<int>(it - first_.begin()) - 1;
}

}  // namespace zipper::client
