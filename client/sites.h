// Where each world rank of the job runs: the job's sites (clusters, each its
// own InfiniBand subnet, joined through bridge nodes running zipperd) and
// the world ranks in each. Sites are contiguous ranges of world ranks in
// world-rank order: site 0 holds world ranks 0..n0-1, site 1 the next n1,
// and so on. Built once at MMPI_Init from what the launcher passes (today
// MMPI_NP_LOW/MMPI_NP_HIGH/MMPI_GROUP, the two-site shorthand; standalone:
// one site); every layer asks it, never a range of its own. docs/sites.md.
//
// Pure data, independent of MPI, so that it is unit-tested on its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zipper::client {

/// A half-open range of world ranks [first, end).
struct WorldRange {
  int first = 0, end = 0;
  int size() const { return end - first; }
  bool contains(int w) const { return w >= first && w < end; }
};

class SiteMap {
 public:
  /// Most sites a job may span (the wire's site table has room for no more).
  static constexpr int kMaxSites = 64;
  /// Most world ranks a job may hold (the wire's virtual ranks are 24-bit).
  static constexpr std::uint64_t kMaxWorldSize = std::uint64_t{1} << 24;

  /// One site of `world_size` ranks, this process in it (standalone).
  /// world_size must be 1..kMaxWorldSize.
  static SiteMap single(int world_size);
  /// The job's sites: `ranks_per_site[s]` world ranks in site s, sites in
  /// world-rank order; this process runs in site `local_site`. Returns
  /// nullopt and sets *why when the table is empty, has more than
  /// kMaxSites sites, a site of 0 ranks, a total above kMaxWorldSize, or
  /// local_site is not one of its sites.
  static std::optional<SiteMap> make(const std::vector<std::uint64_t>& ranks_per_site,
                                     int local_site, std::string* why);

  /// Number of sites (>= 1).
  int sites() const { return static_cast<int>(ranks_.size()); }
  /// World ranks over all sites.
  int world_size() const { return first_.back() + ranks_.back(); }
  /// The site this process runs in.
  int local_site() const { return local_; }
  /// The world ranks of site s, 0 <= s < sites().
  WorldRange ranks_in(int s) const {
    const auto i = static_cast<std::size_t>(s);
    return {first_[i], first_[i] + ranks_[i]};
  }
  /// This process's site's world ranks.
  WorldRange local_ranks() const { return ranks_in(local_); }
  /// The site of world rank w, or -1 when w is outside 0..world_size()-1.
  int site_of(int w) const;
  /// True when world rank w runs in this process's site (reached through
  /// Open MPI, never through zipperd). False outside 0..world_size()-1.
  bool is_local(int w) const { return w >= local_first_ && w < local_end_; }
  /// The ranks of each site in site order (the launcher's table).
  const std::vector<int>& ranks_per_site() const { return ranks_; }

  bool operator==(const SiteMap&) const = default;

 private:
  SiteMap() = default;
  std::vector<int> ranks_;  // per site
  std::vector<int> first_;  // world rank of each site's first
  int local_ = 0;
  int local_first_ = 0, local_end_ = 0;  // ranks_in(local_), for is_local on every frame
};

}  // namespace zipper::client
