// Where the ranks of one communicator live: each communicator rank is a
// virtual world rank (zipperd's addressing unit) in one of the job's sites
// (sites.h). The members of each site keep their communicator order, so the
// i-th member of this process's site is rank i of the communicator's native
// Open MPI communicator. "Remote" members are those of every other site.
//
// Pure data, independent of MPI, so that it is unit-tested on its own.
#pragma once

#include <vector>

#include "sites.h"

namespace zipper::client {

class RankMap {
 public:
  RankMap() = default;
  /// `world[r]`: world rank of communicator rank r (distinct, each in
  /// 0..sites.world_size()-1); sites.is_local(w) tells this process's site's.
  RankMap(std::vector<int> world, const SiteMap& sites);

  int size() const { return static_cast<int>(world_.size()); }
  /// World rank of communicator rank r (0 <= r < size()).
  int world(int r) const { return world_[static_cast<std::size_t>(r)]; }
  /// Communicator rank of world rank w, or -1 when w is not a member.
  int rank_of_world(int w) const;
  bool is_local(int r) const { return local_[static_cast<std::size_t>(r)]; }
  /// Position of rank r among the members of its own site.
  int index_in_cluster(int r) const { return index_[static_cast<std::size_t>(r)]; }
  /// Communicator ranks of this site's members and of every other site's, ascending.
  const std::vector<int>& local_members() const { return local_members_; }
  const std::vector<int>& remote_members() const { return remote_members_; }
  /// Members in each site of the job, in site order (0 for a site without any).
  const std::vector<int>& site_members() const { return site_members_; }
  /// Sites holding at least one member.
  int sites_spanned() const { return sites_spanned_; }
  /// Each site's first member (its index_in_cluster 0), in site order; -1
  /// for a site without any.
  const std::vector<int>& site_leaders() const { return site_leaders_; }
  /// True when this site's members and the other sites' are each
  /// consecutive communicator ranks.
  bool blocked() const { return blocked_; }
  const std::vector<int>& world_ranks() const { return world_; }

 private:
  std::vector<int> world_;
  std::vector<int> from_world_;  // world rank -> communicator rank, -1 if absent
  std::vector<bool> local_;
  std::vector<int> index_;
  std::vector<int> local_members_, remote_members_;
  std::vector<int> site_members_;
  std::vector<int> site_leaders_;
  int sites_spanned_ = 0;
  bool blocked_ = true;
};

}  // namespace zipper::client
