// How a (buffer, count, datatype) triple maps to bytes on the wire.
// Contiguous layouts are sent and received in place (zero copy); anything else
// is packed with MPI_Pack / unpacked with MPI_Unpack (homogeneous clusters:
// both sides run the same Open MPI on the same architecture).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zipper::client {

struct Layout {
  std::uint64_t bytes = 0;    // packed size of count elements
  bool contiguous = true;     // data lies in one block starting at `base`
  std::byte* base = nullptr;  // first byte of data when contiguous
};

/// Describes buf/count/datatype. Returns MPI_SUCCESS or MPI_ERR_TYPE /
/// MPI_ERR_COUNT for invalid input.
int describe(const void* buf, int count, MPI_Datatype type, Layout* out);

/// Packs a non-contiguous layout into `out` (resized to the packed size).
int pack(const void* buf, int count, MPI_Datatype type, MPI_Comm comm, std::vector<std::byte>* out);

/// Unpacks `n` bytes into buf/count/type (n may be less than the full size).
int unpack(const std::byte* data, std::uint64_t n, void* buf, int count, MPI_Datatype type,
           MPI_Comm comm);

}  // namespace zipper::client
