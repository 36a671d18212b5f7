// Who is where in MMPI_COMM_WORLD, as the collectives see it: the low
// cluster holds virtual ranks 0..x-1, the high cluster x..x+y-1. Every
// collective runs its intra-cluster steps natively on the local cluster's
// collective communicator and its inter-cluster steps through zipperd.
#pragma once

#include <mpi.h>

#include "../client/runtime.h"

namespace zipper::coll {

struct Topology {
  client::Runtime* rt = nullptr;
  MPI_Comm local = MPI_COMM_NULL;  // this cluster, reserved for collectives
  int rank = 0, size = 1;          // virtual rank and world size
  int x = 1, y = 0;                // ranks in the low and the high cluster
  int offset = 0;                  // virtual rank of local rank 0
  int local_rank = 0, local_size = 1;
  int remote_offset = 0, remote_size = 0;  // the other cluster (size 0: standalone)

  static Topology of(client::Runtime& rt);

  bool standalone() const { return remote_size == 0; }
  bool high() const { return offset > 0; }
  bool is_local(int vrank) const { return vrank >= offset && vrank < offset + local_size; }
  /// Largest useful number of concurrent inter-cluster senders: min(x, y).
  int max_senders() const { return x < y ? x : y; }
  /// Clamps a requested n to 1..min(x, y).
  int clamp_senders(int n) const;
};

}  // namespace zipper::coll
