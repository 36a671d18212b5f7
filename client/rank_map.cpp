#include "rank_map.h"

namespace zipper::client {

namespace {
bool consecutive(const std::vector<int>& ranks) {
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i] != ranks[i - 1] + 1) return false;
  return true;
}
}  // namespace

RankMap::RankMap(std::vector<int> world, const SiteMap& sites)
    : world_(std::move(world)),
      from_world_(static_cast<std::size_t>(sites.world_size()), -1),
      site_members_(static_cast<std::size_t>(sites.sites()), 0),
      site_leaders_(static_cast<std::size_t>(sites.sites()), -1) {
  const std::size_t n = world_.size();
  local_.resize(n);
  index_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int w = world_[r];
    from_world_[static_cast<std::size_t>(w)] = static_cast<int>(r);
    const bool local = sites.is_local(w);
    local_[r] = local;
    (local ? local_members_ : remote_members_).push_back(static_cast<int>(r));
    const auto site = static_cast<std::size_t>(sites.site_of(w));
    int& in_site = site_members_[site];
    if (in_site++ == 0) {
      ++sites_spanned_;
      site_leaders_[site] = static_cast<int>(r);
    }
    index_[r] = in_site - 1;
  }
  blocked_ = consecutive(local_members_) && consecutive(remote_members_);
}

int RankMap::rank_of_world(int w) const {
  if (w < 0 || w >= static_cast<int>(from_world_.size())) return -1;
  return from_world_[static_cast<std::size_t>(w)];
}

}  // namespace zipper::client
