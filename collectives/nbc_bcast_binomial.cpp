#include "nbc_bcast_binomial.h"

namespace zipper::coll {

void nbc_bcast_binomial(Schedule& s, void* buf, int count, MPI_Datatype type, int root) {
  const Topology& t = s.topology();
  type = s.keep(type);  // the lambdas below may run after the caller freed it
  const bool root_here = t.is_local(root);
  const int n = t.local_size;
  const int src = root_here ? t.index_in_cluster(root) : 0;
  const int rel = (t.index_in_cluster(t.rank) - src + n) % n;
  auto member = [&](int v) { return t.local_member((v + src) % n); };
  // Receive from the parent (lowest set bit cleared), or from the root.
  int mask = 1;
  for (; mask < n; mask <<= 1)
    if (rel & mask) break;
  if (rel != 0) {
    s.recv(buf, count, type, member(rel - mask));
    s.end_round();
  } else if (!root_here) {
    s.recv(buf, count, type, root);
    s.end_round();
  }
  // The root first sends to every other site's first member, each the
  // root of its own site's tree.
  if (t.rank == root)
    for (int leader : t.comm->map().site_leaders())
      if (leader >= 0 && !t.is_local(leader)) s.send(buf, count, type, leader);
  // Children rel + 2^k below that bit, farthest (largest subtree) first.
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (rel + mask < n) s.send(buf, count, type, member(rel + mask));
  s.end_round();
}

}  // namespace zipper::coll
