// What an inter-communicator adds to client::Comm (MPI-3.1 §6.6). The Comm
// itself addresses the remote group: its RankMap lists the remote group's
// world ranks, so point-to-point ranks, the engine's matching and the status
// source are remote ranks with no change in the engine; its rank is the
// caller's rank in the local group; its native communicator is an Open MPI
// intra-communicator over the two groups' members in this cluster, in the
// merged order, the remote group's from Comm::native_base on (never an Open
// MPI inter-communicator: Open MPI 4.1's MPI_Comm_idup of one hangs when
// other idups of the process overlap it, and MMPI_Comm_idup duplicates the
// native communicator). Collectives run as schedules on a hidden intra-communicator
// over both groups (`merged`, with its own context id), which also serves
// Intercomm_merge, Comm_dup and Comm_split of the inter-communicator.
#pragma once

#include <memory>

#include "rank_map.h"

namespace zipper::client {

class Comm;

struct InterInfo {
  RankMap local;                 // the local group's world ranks
  std::shared_ptr<Comm> merged;  // both groups: the first group, then the second
  int local_offset = 0;          // merged rank of local rank 0
  int remote_offset = 0;         // merged rank of remote rank 0
  int local_size() const { return local.size(); }
  int merged_of_local(int r) const { return local_offset + r; }
  int merged_of_remote(int r) const { return remote_offset + r; }
};

}  // namespace zipper::client
