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

/// `count` elements in n near-equal segments S_0..S_{n-1} (the same on both
/// clusters, whatever their sizes), each split again among a group of
/// consecutive local ranks: group j is {i : i * n / local_size == j}, its
/// first rank is its leader (the inter-cluster sender of S_j). counts/displs
/// have one entry per local rank, in rank order, as MPI_Reduce_scatter and
/// MPI_Allgatherv want them; every rank owns a piece (when count allows),
/// so those native steps stay balanced.
struct GroupedSegments {
  std::vector<int> counts, displs;          // each local rank's piece
  std::vector<int> seg_counts, seg_displs;  // S_j
  int n, local_size;

  GroupedSegments(int count, int n_, int local_size_)
      : counts(local_size_, 0), displs(local_size_, 0), n(n_), local_size(local_size_) {
    const Segments s(count, n, n);
    seg_counts = s.counts;
    seg_displs = s.displs;
    for (int j = 0; j < n; ++j) {
      const int first = leader(j, local_size), members = leader(j + 1, local_size) - first;
      const Segments piece(seg_counts[j], members, members);
      for (int k = 0; k < members; ++k) {
        counts[first + k] = piece.counts[k];
        displs[first + k] = seg_displs[j] + piece.displs[k];
      }
    }
  }
  int group_of(int local_rank) const { return local_rank * n / local_size; }
  /// First local rank of group j in a cluster of `size` ranks: ceil(j * size / n).
  int leader(int j, int size) const { return (j * size + n - 1) / n; }
};

}  // namespace zipper::coll
