#include "topology.h"

#include <algorithm>

namespace zipper::coll {

Topology Topology::of(client::Runtime& rt) {
  Topology t;
  t.rt = &rt;
  t.local = rt.collective_comm();
  t.rank = rt.rank();
  t.size = rt.size();
  t.offset = rt.offset();
  t.local_size = rt.local_size();
  t.local_rank = t.rank - t.offset;
  t.x = rt.low_size();
  t.y = t.size - t.x;
  if (t.size > t.local_size) {
    t.remote_offset = t.high() ? 0 : t.x;
    t.remote_size = t.size - t.local_size;
  }
  return t;
}

int Topology::clamp_senders(int n) const { return std::clamp(n, 1, std::max(1, max_senders())); }

}  // namespace zipper::coll
