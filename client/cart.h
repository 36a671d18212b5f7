// Cartesian process topologies (MPI-3.1 §7.5): row-major numbering of a
// dims[0] x ... x dims[n-1] grid, each dimension periodic or not.
//
// Pure arithmetic, independent of MPI, so that it is unit-tested on its own;
// errors come back as nullopt / false and the C API maps them to MPI codes.
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace zipper::client {

/// MPI_Dims_create: fills the zero entries of `dims` so that the product is
/// `nnodes` and the filled entries are as close to each other as possible,
/// in non-increasing order. False when nnodes <= 0, an entry is negative, or
/// the non-zero entries' product does not divide nnodes.
bool dims_create(int nnodes, std::vector<int>& dims);

struct Cart {
  std::vector<int> dims;
  std::vector<bool> periods;

  int ndims() const { return static_cast<int>(dims.size()); }
  /// Number of grid positions (1 for zero dimensions).
  int size() const;
  /// Coordinates of `rank` (0 <= rank < size()).
  std::vector<int> coords(int rank) const;
  /// Rank at `coords`; periodic dimensions wrap, others must be in range
  /// (nullopt otherwise).
  std::optional<int> rank(const std::vector<int>& coords) const;
  /// MPI_Cart_shift: (source, dest) of `rank` moving `disp` along `dim`;
  /// `proc_null` where a non-periodic edge is passed.
  std::pair<int, int> shift(int rank, int dim, int disp, int proc_null) const;
  /// MPI_Cart_sub: the colour (position in the dropped dimensions) and key
  /// (position in the kept ones) that put `rank` in its sub-grid.
  std::pair<int, int> sub_color_key(int rank, const std::vector<bool>& remain) const;
  /// The sub-grid of the kept dimensions.
  Cart sub(const std::vector<bool>& remain) const;
};

}  // namespace zipper::client
