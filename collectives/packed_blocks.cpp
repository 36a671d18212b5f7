#include "packed_blocks.h"

#include "typed_buffer.h"

namespace zipper::coll {

int packed_size(int count, MPI_Datatype type) {
  int size = 0;
  MPI_Type_size(type, &size);
  return count * size;
}

int pack_blocks(const void* buf, const int counts[], const int displs[], MPI_Datatype type,
                const std::vector<int>& ranks, std::vector<char>* out) {
  int bytes = 0;
  for (int r : ranks) bytes += packed_size(counts[r], type);
  int pos = static_cast<int>(out->size());
  out->resize(out->size() + bytes);
  // Open MPI refuses a null buffer even for zero bytes: skip empty blocks.
  for (int r : ranks)
    if (packed_size(counts[r], type) > 0)
      if (int rc = MPI_Pack(elem(buf, displs[r], type), counts[r], type, out->data(),
                            static_cast<int>(out->size()), &pos, MPI_COMM_SELF))
        return rc;
  return MPI_SUCCESS;
}

int unpack_blocks(const std::vector<char>& in, void* buf, const int counts[], const int displs[],
                  MPI_Datatype type, const std::vector<int>& ranks) {
  int pos = 0;
  for (int r : ranks)
    if (packed_size(counts[r], type) > 0)
      if (int rc = MPI_Unpack(in.data(), static_cast<int>(in.size()), &pos,
                              elem(buf, displs[r], type), counts[r], type, MPI_COMM_SELF))
        return rc;
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
