// Splits `count` elements into n near-equal segments owned by local ranks
// 0..n-1 (the inter-cluster senders); other local ranks own nothing. The
// counts/displs arrays have one entry per local rank, as MPI_Scatterv,
// MPI_Allgatherv and MPI_Reduce_scatter want them.
#pragma once

#include <vector>

namespace zipper::coll {

struct Segments {
  std::vector<int> counts;  // elements owned by each local rank
  std::vector<int> displs;  // first element of each local rank's segment

  Segments(int count, int n, int local_size) : counts(local_size, 0), displs(local_size, 0) {
    const int base = count / n, rem = count % n;
    int at = 0;
    for (int j = 0; j < local_size; ++j) {
      displs[j] = at;
      if (j < n) counts[j] = base + (j < rem ? 1 : 0);
      at += counts[j];
    }
  }
};

}  // namespace zipper::coll
