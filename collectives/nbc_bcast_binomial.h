#pragma once
#include "schedule.h"
namespace zipper::coll {
/// Non-blocking broadcast from `root`, two-level: the root first sends to
/// every other site's member 0 (one inter-site message per site), then each
/// site runs a binomial tree rooted at the rank holding the data (the root,
/// or that site's member 0), over its members in index_in_cluster order.
/// Correct for any layout and any number of sites. Algorithm: binomial tree
/// broadcast (Thakur et al. 2005 §4.1) per site, MagPIe's two-level
/// structure (Kielmann et al. 1999 §3).
void nbc_bcast_binomial(Schedule& s, void* buf, int count, MPI_Datatype type, int root);
}  // namespace zipper::coll
