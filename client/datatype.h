// How a (buffer, count, datatype) triple maps to bytes on the wire.
// Contiguous layouts are sent and received in place (zero copy); anything else
// is packed with MPI_Pack / unpacked with MPI_Unpack (homogeneous clusters:
// both sides run the same Open MPI on the same architecture), in pieces
// below INT_MAX bytes (type_pieces.h): sizes here are 64-bit, so messages
// and single elements of 2 GiB and more pass.
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

/// A datatype an operation in flight uses. MPI lets the application free
/// its handle meanwhile (MPI-3.1 section 4.1.9: the type stays in use until
/// the operation completes), so a derived type is held as a duplicate of its
/// own; predefined types are used as they are.
class TypeRef {
 public:
  TypeRef() = default;
  ~TypeRef() { reset(); }
  TypeRef(const TypeRef&) = delete;
  TypeRef& operator=(const TypeRef&) = delete;
  /// Holds `t` (a duplicate when it is derived).
  TypeRef& operator=(MPI_Datatype t);
  operator MPI_Datatype() const { return type_; }  // NOLINT: used where MPI wants the type
  void reset();

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool owned_ = false;
};

/// True when `type`'s typemap runs in increasing address order as far as its
/// constructors show: predefined types; contiguous, dup and resized types of
/// such; hvector, hindexed and struct types whose blocks are such and follow
/// one another in increasing address order (a large contiguous type built
/// from chunks, as BigMPI and MPICH's tests do). Anything else (vectors,
/// indexed, permutations such as a transpose) counts as not in order, and is
/// packed. Gaps are not judged here (describe compares size and extent).
bool in_typemap_order(MPI_Datatype type);

/// Describes buf/count/datatype. Returns MPI_SUCCESS or MPI_ERR_TYPE /
/// MPI_ERR_COUNT for invalid input.
int describe(const void* buf, MPI_Count count, MPI_Datatype type, Layout* out);

/// Size of one element of `type` in bytes (MPI_Type_size_x: 2 GiB and more
/// too); -1 for an invalid type.
MPI_Count type_size(MPI_Datatype type);

/// Packs `count` elements of `type` at `buf` into `dst` (room for `room`
/// bytes), in pieces below INT_MAX bytes; *packed (optional) gets the bytes
/// written.
int pack_into(const void* buf, MPI_Count count, MPI_Datatype type, std::byte* dst, MPI_Count room,
              MPI_Comm comm, MPI_Count* packed = nullptr);

/// Packs a non-contiguous layout into `out` (resized to the packed size).
int pack(const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
         std::vector<std::byte>* out);

/// Unpacks `n` bytes into buf/count/type (n may be less than the full size).
int unpack(const std::byte* data, std::uint64_t n, void* buf, MPI_Count count, MPI_Datatype type,
           MPI_Comm comm);

}  // namespace zipper::client
