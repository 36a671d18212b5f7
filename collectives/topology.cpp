#include "topology.h"

#include <algorithm>

namespace zipper::coll {

Topology Topology::of(client::PointToPoint& p2p, client::CommPtr comm) {
  Topology t;
  t.p2p = &p2p;
  const client::RankMap& m = comm->map();
  t.local = comm->native_coll();
  t.rank = comm->rank();
  t.size = comm->size();
  t.local_size = static_cast<int>(m.local_members().size());
  t.remote_size = static_cast<int>(m.remote_members().size());
  t.local_rank = m.index_in_cluster(t.rank);
  t.site_members = m.site_members();
  t.sites_spanned = m.sites_spanned();
  t.remote_first_ = t.remote_size > 0 && m.local_members().front() > m.remote_members().front();
  t.comm = std::move(comm);
  return t;
}

std::vector<int> Topology::local_slice(const int* a) const {
  std::vector<int> out(static_cast<std::size_t>(local_size));
  for (int i = 0; i < local_size; ++i) out[static_cast<std::size_t>(i)] = a[local_member(i)];
  return out;
}

int Topology::max_senders() const {
  if (sites_spanned < 2) return 0;
  int fewest = size;
  for (int n : site_members)
    if (n > 0) fewest = std::min(fewest, n);
  return fewest;
}

int Topology::clamp_senders(int n) const { return std::clamp(n, 1, std::max(1, max_senders())); }

}  // namespace zipper::coll
