#include "datatype.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <vector>

#include "type_contents.h"
#include "type_pieces.h"

namespace zipper::client {

TypeRef& TypeRef::operator=(MPI_Datatype t) {
  reset();
  type_ = t;
  if (t == MPI_DATATYPE_NULL) return *this;
  int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
  if (MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
      combiner != MPI_COMBINER_NAMED) {
    MPI_Datatype dup = MPI_DATATYPE_NULL;
    if (MPI_Type_dup(t, &dup) == MPI_SUCCESS) {
      type_ = dup;
      owned_ = true;
    }
  }
  return *this;
}

void TypeRef::reset() {
  if (owned_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&type_);
  }
  type_ = MPI_DATATYPE_NULL;
  owned_ = false;
}

namespace {

struct Extents {
  MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
  explicit Extents(MPI_Datatype t) {
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent_x(t, &lb, &extent);
    MPI_Type_get_true_extent_x(t, &tlb, &textent);
  }
};

// True when blocks of `len[i]` elements of `types[i]` at byte displacement
// `disp[i]` follow one another in increasing address order, each in
// typemap order (what in_typemap_order asks of a constructor's blocks).
bool blocks_in_order(int n, const std::function<MPI_Count(int)>& len,
                     const std::function<MPI_Count(int)>& disp,
                     const std::function<MPI_Datatype(int)>& types) {
  MPI_Count end = 0;
  bool first = true;
  for (int i = 0; i < n; ++i) {
    if (len(i) == 0) continue;
    const MPI_Datatype t = types(i);
    const Extents e(t);
    if (e.size == 0) continue;
    if (!in_typemap_order(t)) return false;
    // Repeated elements stay in order only when they follow back to back.
    if (len(i) > 1 && (e.extent != e.size || e.textent != e.size)) return false;
    const MPI_Count start = disp(i) + e.tlb;
    if (!first && start < end) return false;
    end = start + (len(i) - 1) * e.extent + e.textent;
    first = false;
  }
  return true;
}

}  // namespace

bool in_typemap_order(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  if (MPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS) return false;
  if (comb == MPI_COMBINER_NAMED) return true;
  if (comb != MPI_COMBINER_CONTIGUOUS && comb != MPI_COMBINER_DUP && comb != MPI_COMBINER_RESIZED &&
      comb != MPI_COMBINER_STRUCT && comb != MPI_COMBINER_HINDEXED && comb != MPI_COMBINER_HVECTOR)
    return false;
  TypeContents c;
  if (c.read(type) != MPI_SUCCESS) return false;
  const std::vector<int>& I = c.ints;
  const std::vector<MPI_Aint>& A = c.addrs;
  const std::vector<MPI_Datatype>& T = c.types;
  bool ok = false;
  const auto one = [&](int) { return T[0]; };
  switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      ok = in_typemap_order(T[0]);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      ok = blocks_in_order(
          1, [&](int) { return MPI_Count{I[0]}; }, [](int) { return MPI_Count{0}; }, one);
      break;
    // A large type built from pieces (MPICH's and BigMPI's contiguous of
    // 2 GiB and more: a struct or hindexed of contiguous chunks) is one block.
    case MPI_COMBINER_HVECTOR:
      ok = blocks_in_order(
          I[0], [&](int) { return MPI_Count{I[1]}; }, [&](int i) { return i * MPI_Count{A[0]}; },
          one);
      break;
    case MPI_COMBINER_HINDEXED:
      ok = blocks_in_order(
          I[0], [&](int i) { return MPI_Count{I[1 + i]}; }, [&](int i) { return MPI_Count{A[i]}; },
          one);
      break;
    case MPI_COMBINER_STRUCT:
      ok = blocks_in_order(
          I[0], [&](int i) { return MPI_Count{I[1 + i]}; }, [&](int i) { return MPI_Count{A[i]}; },
          [&](int i) { return T[i]; });
      break;
    default:
      break;
  }
  return ok;
}

int describe(const void* buf, MPI_Count count, MPI_Datatype type, Layout* out) {
  if (count < 0) return MPI_ERR_COUNT;
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  // The _x forms: an element may hold 2 GiB and more (MPI_Type_size gives
  // MPI_UNDEFINED there).
  MPI_Count size = 0;
  if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0) return MPI_ERR_TYPE;
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent_x(type, &lb, &extent);
  MPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  out->bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
  // One element is a single block when its data spans exactly `size` bytes
  // in typemap order (a transpose, say an hvector of columns, spans its size
  // too, permuted); consecutive elements stay one block when the extent
  // equals the size.
  out->contiguous = size == true_extent && (count <= 1 || extent == size) && in_typemap_order(type);
  out->base = static_cast<std::byte*>(const_cast<void*>(buf)) + true_lb;
  return MPI_SUCCESS;
}

MPI_Count type_size(MPI_Datatype type) {
  MPI_Count size = -1;
  if (type == MPI_DATATYPE_NULL || MPI_Type_size_x(type, &size) != MPI_SUCCESS) return -1;
  return size;
}

int pack_into(const void* buf, MPI_Count count, MPI_Datatype type, std::byte* dst, MPI_Count room,
              MPI_Comm comm, MPI_Count* packed) {
  MPI_Count at = 0;
  const int rc =
      for_each_piece(static_cast<std::byte*>(const_cast<void*>(buf)), count, type, kPackPieceLimit,
                     [&](std::byte* p, int n, MPI_Datatype t, MPI_Count) {
                       int pos = 0;
                       const auto left = static_cast<int>(std::min<MPI_Count>(room - at, INT_MAX));
                       const int prc = MPI_Pack(p, n, t, dst + at, left, &pos, comm);
                       at += pos;
                       return prc;
                     });
  if (packed) *packed = at;
  return rc;
}

int pack(const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
         std::vector<std::byte>* out) {
  const MPI_Count size = type_size(type);
  if (count < 0) return MPI_ERR_COUNT;
  if (size < 0) return MPI_ERR_TYPE;
  out->clear();
  // Open MPI refuses MPI_Pack into a null buffer even for zero bytes.
  if (count == 0 || size == 0) return MPI_SUCCESS;
  // Homogeneous clusters: the packed size is the type size. MPI_Pack takes
  // int sizes and positions, so pack_into packs pieces below kPackPieceLimit.
  out->resize(static_cast<std::size_t>(count * size));
  MPI_Count at = 0;
  const int rc = pack_into(buf, count, type, out->data(), count * size, comm, &at);
  out->resize(static_cast<std::size_t>(at));
  return rc;
}

int unpack(const std::byte* data, std::uint64_t n, void* buf, MPI_Count count, MPI_Datatype type,
           MPI_Comm comm) {
  MPI_Count size = 0;
  if (MPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0) return MPI_ERR_TYPE;
  if (size == 0 || n == 0) return MPI_SUCCESS;
  const auto whole = static_cast<MPI_Count>(std::min<std::uint64_t>(
      n / static_cast<std::uint64_t>(size), static_cast<std::uint64_t>(count)));
  std::uint64_t at = 0;
  if (int rc = for_each_piece(static_cast<std::byte*>(buf), whole, type, kPackPieceLimit,
                              [&](std::byte* p, int k, MPI_Datatype t, MPI_Count) {
                                int pos = 0;
                                const auto left =
                                    static_cast<int>(std::min<std::uint64_t>(n - at, INT_MAX));
                                const int urc = MPI_Unpack(data + at, left, &pos, p, k, t, comm);
                                at += static_cast<std::uint64_t>(pos);
                                return urc;
                              }))
    return rc;
  const std::uint64_t rest = n - at;
  if (whole == count || rest == 0 || rest >= static_cast<std::uint64_t>(size)) return MPI_SUCCESS;
  // A message shorter than its elements fills the leading basic elements of
  // the last one too (MPI_Get_elements counts them; MPICH
  // datatype/getpartelm). MPI_Unpack takes whole elements only: unpack one
  // whose tail is the buffer's own current contents, so only the leading
  // bytes change.
  MPI_Count lb = 0, extent = 0;
  MPI_Type_get_extent_x(type, &lb, &extent);
  std::byte* last = static_cast<std::byte*>(buf) + whole * extent;
  std::vector<std::byte> element(static_cast<std::size_t>(size));
  if (int rc = pack_into(last, 1, type, element.data(), size, comm)) return rc;
  std::memcpy(element.data(), data + at, static_cast<std::size_t>(rest));
  return unpack(element.data(), static_cast<std::uint64_t>(size), last, 1, type, comm);
}

}  // namespace zipper::client
