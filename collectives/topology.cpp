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
  t.x = m.low_count();
  t.y = t.size - t.x;
  t.high_ = t.remote_size > 0 && m.local_members().front() > m.remote_members().front();
  t.comm = std::move(comm);
  return t;
}

std::vector<int> Topology::local_slice(const int* a) const {
  std::vector<int> out(static_cast<std::size_t>(local_size));
  for (int i = 0; i < local_size; ++i) out[static_cast<std::size_t>(i)] = a[local_member(i)];
  return out;
}

int Topology::clamp_senders(int n) const { return std::clamp(n, 1, std::max(1, max_senders())); }

}  // namespace zipper::coll
