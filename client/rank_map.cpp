#include "rank_map.h"

namespace zipper::client {

namespace {
bool consecutive(const std::vector<int>& ranks) {
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i] != ranks[i - 1] + 1) return false;
  return true;
}
}  // namespace

RankMap::RankMap(std::vector<int> world, int world_size, int local_lo, int local_hi)
    : world_(std::move(world)), from_world_(static_cast<std::size_t>(world_size), -1) {
  const std::size_t n = world_.size();
  local_.resize(n);
  index_.resize(n);
  // The low cluster is the one holding world rank 0.
  const bool local_is_low = local_lo == 0;
  for (std::size_t r = 0; r < n; ++r) {
    const int w = world_[r];
    from_world_[static_cast<std::size_t>(w)] = static_cast<int>(r);
    const bool local = w >= local_lo && w < local_hi;
    local_[r] = local;
    auto& members = local ? local_members_ : remote_members_;
    index_[r] = static_cast<int>(members.size());
    members.push_back(static_cast<int>(r));
    if (local == local_is_low) ++low_count_;
  }
  blocked_ = consecutive(local_members_) && consecutive(remote_members_);
}

int RankMap::rank_of_world(int w) const {
  if (w < 0 || w >= static_cast<int>(from_world_.size())) return -1;
  return from_world_[static_cast<std::size_t>(w)];
}

}  // namespace zipper::client
