#include "rma_types.h"

#include <algorithm>
#include <array>

#include "type_contents.h"

namespace zipper::client::rma {

namespace {

// The type classes of MPI-3.1 5.9.2, which decide the ops defined on a type,
// as Open MPI 4.1 applies them (the reference: an origin refuses what native
// MPI refuses; test_rma_op_pairs.cpp compares every pair). Open MPI reduces
// MPI_BYTE, MPI_CHAR, MPI_CHARACTER, MPI_AINT, MPI_OFFSET, MPI_COUNT and
// MPI_INTEGER1/2/8 like C integers (logical ops included), but MPI_INTEGER
// and MPI_INTEGER4 like Fortran integers (no logical ops).
enum class Class : std::uint8_t { kNone, kCInt, kFortranInt, kFloat, kLogical, kComplex, kPair };

struct Elem {
  MPI_Datatype type;
  Class cls;
};

// Both tables are built at first use, after MPI_Init, because the handles are
// addresses in Open MPI. Order is the wire format: append only.
const std::vector<Elem>& elems() {
  static const std::vector<Elem> t = {
      {MPI_BYTE, Class::kCInt},
      {MPI_CHAR, Class::kCInt},
      {MPI_SIGNED_CHAR, Class::kCInt},
      {MPI_UNSIGNED_CHAR, Class::kCInt},
      {MPI_SHORT, Class::kCInt},
      {MPI_UNSIGNED_SHORT, Class::kCInt},
      {MPI_INT, Class::kCInt},
      {MPI_UNSIGNED, Class::kCInt},
      {MPI_LONG, Class::kCInt},
      {MPI_UNSIGNED_LONG, Class::kCInt},
      {MPI_LONG_LONG, Class::kCInt},
      {MPI_UNSIGNED_LONG_LONG, Class::kCInt},
      {MPI_FLOAT, Class::kFloat},
      {MPI_DOUBLE, Class::kFloat},
      {MPI_LONG_DOUBLE, Class::kFloat},
      {MPI_WCHAR, Class::kNone},
      {MPI_C_BOOL, Class::kLogical},
      {MPI_INT8_T, Class::kCInt},
      {MPI_INT16_T, Class::kCInt},
      {MPI_INT32_T, Class::kCInt},
      {MPI_INT64_T, Class::kCInt},
      {MPI_UINT8_T, Class::kCInt},
      {MPI_UINT16_T, Class::kCInt},
      {MPI_UINT32_T, Class::kCInt},
      {MPI_UINT64_T, Class::kCInt},
      {MPI_AINT, Class::kCInt},
      {MPI_OFFSET, Class::kCInt},
      {MPI_COUNT, Class::kCInt},
      {MPI_C_FLOAT_COMPLEX, Class::kComplex},
      {MPI_C_DOUBLE_COMPLEX, Class::kComplex},
      {MPI_C_LONG_DOUBLE_COMPLEX, Class::kComplex},
      {MPI_FLOAT_INT, Class::kPair},
      {MPI_DOUBLE_INT, Class::kPair},
      {MPI_LONG_INT, Class::kPair},
      {MPI_2INT, Class::kPair},
      {MPI_SHORT_INT, Class::kPair},
      {MPI_LONG_DOUBLE_INT, Class::kPair},
      {MPI_INTEGER, Class::kFortranInt},
      {MPI_REAL, Class::kFloat},
      {MPI_DOUBLE_PRECISION, Class::kFloat},
      {MPI_COMPLEX, Class::kComplex},
      {MPI_DOUBLE_COMPLEX, Class::kComplex},
      {MPI_LOGICAL, Class::kLogical},
      {MPI_CHARACTER, Class::kCInt},
      {MPI_2REAL, Class::kPair},
      {MPI_2DOUBLE_PRECISION, Class::kPair},
      {MPI_2INTEGER, Class::kPair},
      {MPI_INTEGER1, Class::kCInt},
      {MPI_INTEGER2, Class::kCInt},
      {MPI_INTEGER4, Class::kFortranInt},
      {MPI_INTEGER8, Class::kCInt},
      {MPI_REAL4, Class::kFloat},
      {MPI_REAL8, Class::kFloat},
      {MPI_PACKED, Class::kNone},
      {MPI_LONG_LONG_INT, Class::kCInt},
      {MPI_UNSIGNED_LONG_LONG, Class::kCInt},
      {MPI_C_COMPLEX, Class::kComplex},
  };
  return t;
}

const std::vector<MPI_Op>& ops() {
  static const std::vector<MPI_Op> t = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                                        MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                                        MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
  return t;
}

int index_in(const std::vector<MPI_Op>& table, MPI_Op v) {
  const auto it = std::find(table.begin(), table.end(), v);
  return it == table.end() ? -1 : static_cast<int>(it - table.begin());
}

}  // namespace

int elem_index(MPI_Datatype t) {
  const auto& e = elems();
  const auto it = std::find_if(e.begin(), e.end(), [t](const Elem& x) { return x.type == t; });
  return it == e.end() ? -1 : static_cast<int>(it - e.begin());
}
MPI_Datatype elem_type(int i) {
  return i >= 0 && i < static_cast<int>(elems().size()) ? elems()[i].type : MPI_DATATYPE_NULL;
}
int op_index(MPI_Op op) { return index_in(ops(), op); }
MPI_Op op_of(int i) {
  return i >= 0 && i < static_cast<int>(ops().size()) ? ops()[i] : MPI_OP_NULL;
}
int replace_index() { return op_index(MPI_REPLACE); }

bool op_defined(int elem, int op) {
  if (elem < 0 || elem >= static_cast<int>(elems().size())) return false;
  const MPI_Op o = op_of(op);
  if (o == MPI_OP_NULL) return false;
  if (o == MPI_REPLACE || o == MPI_NO_OP) return true;
  const Class c = elems()[static_cast<std::size_t>(elem)].cls;
  if (o == MPI_MAXLOC || o == MPI_MINLOC) return c == Class::kPair;
  if (o == MPI_MAX || o == MPI_MIN)
    return c == Class::kCInt || c == Class::kFortranInt || c == Class::kFloat;
  if (o == MPI_SUM || o == MPI_PROD)
    return c == Class::kCInt || c == Class::kFortranInt || c == Class::kFloat ||
           c == Class::kComplex;
  if (o == MPI_LAND || o == MPI_LOR || o == MPI_LXOR)
    return c == Class::kCInt || c == Class::kLogical;
  // MPI_BAND, MPI_BOR, MPI_BXOR
  return c == Class::kCInt || c == Class::kFortranInt;
}
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
