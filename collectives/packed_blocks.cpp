#include "packed_blocks.h"

#include <climits>

#include "../client/datatype.h"
#include "pending.h"
#include "typed_buffer.h"

namespace zipper::coll {

std::int64_t packed_size(int count, MPI_Datatype type) {
  const MPI_Count size = client::type_size(type);
  return size > 0 && count > 0 ? std::int64_t{count} * size : 0;
}

int pack_blocks(const void* buf, const int counts[], const int displs[], MPI_Datatype type,
                const std::vector<int>& ranks, std::vector<char>* out) {
  std::int64_t bytes = 0;
  for (int r : ranks) bytes += packed_size(counts[r], type);
  std::size_t pos = out->size();
  out->resize(out->size() + static_cast<std::size_t>(bytes));
  // Open MPI refuses a null buffer even for zero bytes: skip empty blocks.
  // client::pack_into: blocks of 2 GiB and more pack in pieces.
  for (int r : ranks) {
    const std::int64_t n = packed_size(counts[r], type);
    if (n == 0) continue;
    MPI_Count packed = 0;
    if (int rc = client::pack_into(elem(buf, displs[r], type), counts[r], type,
                                   reinterpret_cast<std::byte*>(out->data() + pos), n,
                                   MPI_COMM_SELF, &packed))
      return rc;
    pos += static_cast<std::size_t>(packed);
  }
  return MPI_SUCCESS;
}

int unpack_blocks(const std::vector<char>& in, void* buf, const int counts[], const int displs[],
                  MPI_Datatype type, const std::vector<int>& ranks) {
  std::size_t pos = 0;
  for (int r : ranks) {
    const std::int64_t n = packed_size(counts[r], type);
    if (n == 0) continue;
    if (pos + static_cast<std::size_t>(n) > in.size()) return MPI_ERR_TRUNCATE;
    if (int rc = client::unpack(reinterpret_cast<const std::byte*>(in.data() + pos),
                                static_cast<std::uint64_t>(n), elem(buf, displs[r], type),
                                counts[r], type, MPI_COMM_SELF))
      return rc;
    pos += static_cast<std::size_t>(n);
  }
  return MPI_SUCCESS;
}

int cluster_blocks(const Topology& t, std::int64_t mine, ClusterBlocks* out) {
  out->sizes.assign(static_cast<std::size_t>(t.local_size), 0);
  MPI_Request r = MPI_REQUEST_NULL;
  if (int rc = wait_native(
          t, MPI_Iallgather(&mine, 1, MPI_INT64_T, out->sizes.data(), 1, MPI_INT64_T, t.local, &r),
          &r))
    return rc;
  out->sum = 0;
  for (std::int64_t s : out->sizes) out->sum += s;
  out->counts.clear();
  out->offsets.clear();
  if (out->sum > INT_MAX) return MPI_SUCCESS;
  int at = 0;
  for (std::int64_t s : out->sizes) {
    out->counts.push_back(static_cast<int>(s));
    out->offsets.push_back(at);
    at += static_cast<int>(s);
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
