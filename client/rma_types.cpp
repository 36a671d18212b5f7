#include "rma_types.h"

#include <algorithm>
#include <array>
#include <climits>

#include "datatype.h"
#include "type_contents.h"

namespace zipper::client::rma {

namespace {

// Both tables are built at first use, after MPI_Init, because the handles are
// addresses in Open MPI. Order is the wire format: append only.
const std::vector<MPI_Datatype>& elems() {
  static const std::vector<MPI_Datatype> t = {MPI_BYTE,
                                              MPI_CHAR,
                                              MPI_SIGNED_CHAR,
                                              MPI_UNSIGNED_CHAR,
                                              MPI_SHORT,
                                              MPI_UNSIGNED_SHORT,
                                              MPI_INT,
                                              MPI_UNSIGNED,
                                              MPI_LONG,
                                              MPI_UNSIGNED_LONG,
                                              MPI_LONG_LONG,
                                              MPI_UNSIGNED_LONG_LONG,
                                              MPI_FLOAT,
                                              MPI_DOUBLE,
                                              MPI_LONG_DOUBLE,
                                              MPI_WCHAR,
                                              MPI_C_BOOL,
                                              MPI_INT8_T,
                                              MPI_INT16_T,
                                              MPI_INT32_T,
                                              MPI_INT64_T,
                                              MPI_UINT8_T,
                                              MPI_UINT16_T,
                                              MPI_UINT32_T,
                                              MPI_UINT64_T,
                                              MPI_AINT,
                                              MPI_OFFSET,
                                              MPI_COUNT,
                                              MPI_C_FLOAT_COMPLEX,
                                              MPI_C_DOUBLE_COMPLEX,
                                              MPI_C_LONG_DOUBLE_COMPLEX,
                                              MPI_FLOAT_INT,
                                              MPI_DOUBLE_INT,
                                              MPI_LONG_INT,
                                              MPI_2INT,
                                              MPI_SHORT_INT,
                                              MPI_LONG_DOUBLE_INT,
                                              MPI_INTEGER,
                                              MPI_REAL,
                                              MPI_DOUBLE_PRECISION,
                                              MPI_COMPLEX,
                                              MPI_DOUBLE_COMPLEX,
                                              MPI_LOGICAL,
                                              MPI_CHARACTER,
                                              MPI_2REAL,
                                              MPI_2DOUBLE_PRECISION,
                                              MPI_2INTEGER,
                                              MPI_INTEGER1,
                                              MPI_INTEGER2,
                                              MPI_INTEGER4,
                                              MPI_INTEGER8,
                                              MPI_REAL4,
                                              MPI_REAL8,
                                              MPI_PACKED,
                                              MPI_LONG_LONG_INT,
                                              MPI_UNSIGNED_LONG_LONG,
                                              MPI_C_COMPLEX};
  return t;
}

const std::vector<MPI_Op>& ops() {
  static const std::vector<MPI_Op> t = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                        MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                        MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
  return t;
}

template <class T, class V>
int index_in(const std::vector<T>& table, V v) {
  const auto it = std::find(table.begin(), table.end(), v);
  return it == table.end() ? -1 : static_cast<int>(it - table.begin());
}

}  // namespace

int elem_index(MPI_Datatype t) { return index_in(elems(), t); }
MPI_Datatype elem_type(int i) {
  return i >= 0 && i < static_cast<int>(elems().size()) ? elems()[i] : MPI_DATATYPE_NULL;
}
int op_index(MPI_Op op) { return index_in(ops(), op); }
MPI_Op op_of(int i) {
  return i >= 0 && i < static_cast<int>(ops().size()) ? ops()[i] : MPI_OP_NULL;
}
int replace_index() { return op_index(MPI_REPLACE); }
int no_op_index() { return op_index(MPI_NO_OP); }

int basic_element(MPI_Datatype t, MPI_Datatype* out) {
  if (t == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  TypeContents c;  // frees the parts MPI returned on every path
  if (c.read(t) != MPI_SUCCESS) return MPI_ERR_TYPE;
  if (c.combiner == MPI_COMBINER_NAMED) {
    *out = t;
    return MPI_SUCCESS;
  }
  MPI_Datatype found = MPI_DATATYPE_NULL;
  for (MPI_Datatype part : c.types) {
    MPI_Datatype e = MPI_DATATYPE_NULL;
    if (basic_element(part, &e) != MPI_SUCCESS) return MPI_ERR_TYPE;
    if (found != MPI_DATATYPE_NULL && e != found) return MPI_ERR_TYPE;
    found = e;
  }
  if (found == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  *out = found;
  return MPI_SUCCESS;
}

int flatten(MPI_Datatype t, int count, std::vector<Block>* out, std::uint64_t* bytes) {
  out->clear();
  *bytes = 0;
  if (count < 0) return MPI_ERR_COUNT;
  // _x: types of 2 GiB and more are valid (and refused below as too large).
  MPI_Count size = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
  if (t == MPI_DATATYPE_NULL || MPI_Type_size_x(t, &size) != MPI_SUCCESS ||
      MPI_Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent_x(t, &tlb, &textent) != MPI_SUCCESS)
    return MPI_ERR_TYPE;
  const std::uint64_t total = static_cast<std::uint64_t>(size) * static_cast<std::uint64_t>(count);
  *bytes = total;
  if (total == 0) return MPI_SUCCESS;
  if (textent == size && extent == size && in_typemap_order(t)) {  // one block, in order
    out->push_back(Block{tlb, total});
    return MPI_SUCCESS;
  }
  // The typemap's byte offsets, read off MPI_Pack itself: pack a buffer whose
  // every byte holds one byte of its own offset, once per offset byte.
  const std::int64_t reach = static_cast<std::int64_t>(count - 1) * extent;
  const std::int64_t lo = tlb + std::min<std::int64_t>(0, reach);
  const std::int64_t hi = tlb + textent + std::max<std::int64_t>(0, reach);
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo);
  // MPI_Pack below takes an int size.
  if (span > (std::uint64_t{1} << 32) || total > INT_MAX) return MPI_ERR_COUNT;
  std::vector<unsigned char> src(span), packed(total);
  std::vector<std::uint64_t> pos(total, 0);
  int passes = 1;
  while (passes < 4 && (span - 1) >> (8 * passes)) ++passes;
  for (int p = 0; p < passes; ++p) {
    for (std::uint64_t i = 0; i < span; ++i) src[i] = static_cast<unsigned char>(i >> (8 * p));
    int at = 0;
    if (MPI_Pack(src.data() - lo, count, t, packed.data(), static_cast<int>(total), &at,
                 MPI_COMM_SELF) != MPI_SUCCESS)
      return MPI_ERR_TYPE;
    for (std::uint64_t i = 0; i < total; ++i)
      pos[i] |= static_cast<std::uint64_t>(packed[i]) << (8 * p);
  }
  for (std::uint64_t i = 0; i < total; ++i) {
    const std::int64_t o = static_cast<std::int64_t>(pos[i]) + lo;
    if (!out->empty() && out->back().offset + static_cast<std::int64_t>(out->back().len) == o)
      ++out->back().len;
    else
      out->push_back(Block{o, 1});
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::client::rma
