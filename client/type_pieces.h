// Splits buf/count/datatype into pieces that MPI_Pack and MPI_Unpack can
// take (their sizes and positions are `int`), in typemap order, so that
// messages and single elements of 2 GiB and more pack without overflow.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>

namespace zipper::client {

/// A piece: `count` elements of `type` at `base`, `bytes` packed bytes
/// (count * size of type), with bytes <= the limit given and count <= INT_MAX.
using PieceFn = std::function<int(std::byte* base, int count, MPI_Datatype type, MPI_Count bytes)>;

/// Calls `fn` for consecutive pieces of `count` elements of `type` at `base`,
/// in the order MPI_Pack visits the typemap, each of at most `limit` bytes
/// (limit >= 1; pieces of one basic element larger than it are not split).
/// Elements larger than `limit` are split through their constructors
/// (MPI_Type_get_contents): dup, resized, contiguous, (h)vector,
/// (h)indexed, (h)indexed_block, struct and subarray; other combiners
/// (darray) give MPI_ERR_TYPE. Stops at and returns the first error of `fn`.
int for_each_piece(std::byte* base, MPI_Count count, MPI_Datatype type, MPI_Count limit,
                   const PieceFn& fn);

/// The limit libmmpi packs with: well below INT_MAX so that no MPI
/// implementation meets its own int edge.
inline constexpr MPI_Count kPackPieceLimit = MPI_Count{1} << 30;

}  // namespace zipper::client
