#include "rma_types.h"

#include <algorithm>
#include <array>

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

}  // namespace zipper::client::rma
