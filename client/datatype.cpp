#include "datatype.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

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

bool in_typemap_order(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  if (MPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS) return false;
  if (comb == MPI_COMBINER_NAMED) return true;
  if ((comb != MPI_COMBINER_CONTIGUOUS && comb != MPI_COMBINER_DUP &&
       comb != MPI_COMBINER_RESIZED) ||
      nd != 1)
    return false;
  std::vector<int> ints(static_cast<std::size_t>(std::max(ni, 1)));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(std::max(na, 1)));
  MPI_Datatype child = MPI_DATATYPE_NULL;
  if (MPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), &child) != MPI_SUCCESS)
    return false;
  bool ok = in_typemap_order(child);
  if (ok && comb == MPI_COMBINER_CONTIGUOUS && ints[0] > 1) {
    // Repeated elements stay in order only when they follow back to back.
    int size = 0;
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    MPI_Type_size(child, &size);
    MPI_Type_get_extent(child, &lb, &extent);
    MPI_Type_get_true_extent(child, &tlb, &textent);
    ok = extent == size && textent == size;
  }
  int cni, cna, cnd, ccomb;
  if (MPI_Type_get_envelope(child, &cni, &cna, &cnd, &ccomb) == MPI_SUCCESS &&
      ccomb != MPI_COMBINER_NAMED)
    MPI_Type_free(&child);
  return ok;
}

int describe(const void* buf, int count, MPI_Datatype type, Layout* out) {
  if (count < 0) return MPI_ERR_COUNT;
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  int size = 0;
  if (MPI_Type_size(type, &size) != MPI_SUCCESS) return MPI_ERR_TYPE;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  out->bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
  // One element is a single block when its data spans exactly `size` bytes
  // in typemap order (a transpose, say an hvector of columns, spans its size
  // too, permuted); consecutive elements stay one block when the extent
  // equals the size.
  out->contiguous = size == true_extent && (count <= 1 || extent == size) && in_typemap_order(type);
  out->base = static_cast<std::byte*>(const_cast<void*>(buf)) + true_lb;
  return MPI_SUCCESS;
}

int pack(const void* buf, int count, MPI_Datatype type, MPI_Comm comm,
         std::vector<std::byte>* out) {
  int psize = 0;
  int rc = MPI_Pack_size(count, type, comm, &psize);
  if (rc != MPI_SUCCESS) return rc;
  out->clear();
  // Open MPI refuses MPI_Pack into a null buffer even for zero bytes.
  if (count == 0 || psize == 0) return MPI_SUCCESS;
  out->resize(static_cast<std::size_t>(psize));
  int pos = 0;
  rc = MPI_Pack(buf, count, type, out->data(), psize, &pos, comm);
  out->resize(static_cast<std::size_t>(pos));
  return rc;
}

int unpack(const std::byte* data, std::uint64_t n, void* buf, int count, MPI_Datatype type,
           MPI_Comm comm) {
  int size = 0;
  MPI_Type_size(type, &size);
  if (size == 0 || n == 0) return MPI_SUCCESS;
  const int whole =
      static_cast<int>(std::min<std::uint64_t>(n / size, static_cast<std::uint64_t>(count)));
  const int in = static_cast<int>(std::min<std::uint64_t>(n, INT_MAX));
  int pos = 0;
  if (int rc = MPI_Unpack(data, in, &pos, buf, whole, type, comm)) return rc;
  const std::uint64_t rest = n - static_cast<std::uint64_t>(pos);
  if (whole == count || rest == 0 || rest >= static_cast<std::uint64_t>(size)) return MPI_SUCCESS;
  // A message shorter than its elements fills the leading basic elements of
  // the last one too (MPI_Get_elements counts them; MPICH
  // datatype/getpartelm). MPI_Unpack takes whole elements only: unpack one
  // whose tail is the buffer's own current contents, so only the leading
  // bytes change.
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  void* at = static_cast<char*>(buf) + static_cast<MPI_Aint>(whole) * extent;
  std::vector<std::byte> element(static_cast<std::size_t>(size));
  int p = 0;
  if (int rc = MPI_Pack(at, 1, type, element.data(), size, &p, comm)) return rc;
  std::memcpy(element.data(), data + pos, static_cast<std::size_t>(rest));
  p = 0;
  return MPI_Unpack(element.data(), size, &p, at, 1, type, comm);
}

}  // namespace zipper::client
