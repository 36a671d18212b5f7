// Where the ranks of one communicator live: each communicator rank is a
// virtual world rank (zipperd's addressing unit) in one of the two clusters.
// The members of each cluster keep their communicator order, so the i-th
// member of this cluster is rank i of the communicator's native Open MPI
// communicator.
//
// Pure data, independent of MPI, so that it is unit-tested on its own.
#pragma once

#include <vector>

namespace zipper::client {

class RankMap {
 public:
  RankMap() = default;
  /// `world[r]`: world rank of communicator rank r (distinct, each in
  /// 0..world_size-1); world ranks in [local_lo, local_hi) are this cluster's.
  RankMap(std::vector<int> world, int world_size, int local_lo, int local_hi);

  int size() const { return static_cast<int>(world_.size()); }
  /// World rank of communicator rank r (0 <= r < size()).
  int world(int r) const { return world_[static_cast<std::size_t>(r)]; }
  /// Communicator rank of world rank w, or -1 when w is not a member.
  int rank_of_world(int w) const;
  bool is_local(int r) const { return local_[static_cast<std::size_t>(r)]; }
  /// Position of rank r among the members of its own cluster.
  int index_in_cluster(int r) const { return index_[static_cast<std::size_t>(r)]; }
  /// Communicator ranks of this cluster's and of the other cluster's members, ascending.
  const std::vector<int>& local_members() const { return local_members_; }
  const std::vector<int>& remote_members() const { return remote_members_; }
  /// Members of the low cluster (world ranks below the high cluster's first).
  int low_count() const { return low_count_; }
  /// True when each cluster's members are consecutive communicator ranks.
  bool blocked() const { return blocked_; }
  const std::vector<int>& world_ranks() const { return world_; }

 private:
  std::vector<int> world_;
  std::vector<int> from_world_;  // world rank -> communicator rank, -1 if absent
  std::vector<bool> local_;
  std::vector<int> index_;
  std::vector<int> local_members_, remote_members_;
  int low_count_ = 0;
  bool blocked_ = true;
};

}  // namespace zipper::client
