// A run of bytes of any length as the (int count, datatype) pair MPI's calls
// take: a cluster's packed blocks of 2 GiB and more travel as one message.
#pragma once

#include <mpi.h>

namespace zipper::coll {

/// `bytes` bytes of `unit` (a one-byte type: MPI_BYTE or MPI_PACKED). Where
/// an int holds `bytes` it is (bytes, unit); otherwise (1, a committed
/// derived type of contiguous 1 GiB chunks and the rest, back to back), which
/// the destructor frees. Point-to-point (zipperd and Open MPI) takes such a
/// type at any size; Open MPI's collectives are given pieces instead
/// (kBytePiece), since some of them size their buffers with an int.
class ByteType {
 public:
  ByteType(MPI_Count bytes, MPI_Datatype unit);
  ~ByteType();
  ByteType(const ByteType&) = delete;
  ByteType& operator=(const ByteType&) = delete;

  /// MPI_SUCCESS, or the error of building the derived type (count() is then 0).
  int status() const { return status_; }
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  int status_ = MPI_SUCCESS;
  int count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool owned_ = false;
};

/// Bytes per native collective call when a transfer is split into several.
inline constexpr MPI_Count kBytePiece = MPI_Count{1} << 30;

}  // namespace zipper::coll
