// The arguments of a derived datatype's constructor, read with
// MPI_Type_get_envelope/MPI_Type_get_contents (MPI-3.1 §4.1.13), with the
// derived types that call returned freed on scope exit (the standard makes
// the caller free them). Shared by packing in pieces (type_pieces.cpp) and
// the typemap-order check (datatype.cpp), and RMA's element-type check
// (rma_types.cpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace zipper::client {

struct TypeContents {
  int combiner = MPI_COMBINER_NAMED;  // MPI_COMBINER_*
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;

  TypeContents() = default;
  TypeContents(const TypeContents&) = delete;
  TypeContents& operator=(const TypeContents&) = delete;
  ~TypeContents() {
    for (MPI_Datatype& t : types)
      if (derived(t)) MPI_Type_free(&t);
  }

  /// Reads `type`'s constructor. MPI_SUCCESS (a named type leaves the arrays
  /// empty), or MPI_ERR_TYPE if MPI cannot describe it.
  int read(MPI_Datatype type) {
    int ni = 0, na = 0, nd = 0;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return MPI_ERR_TYPE;
    if (combiner == MPI_COMBINER_NAMED) return MPI_SUCCESS;
    ints.resize(static_cast<std::size_t>(ni));
    addrs.resize(static_cast<std::size_t>(na));
    types.assign(static_cast<std::size_t>(nd), MPI_DATATYPE_NULL);
    // Open MPI wants non-null arrays even where a count is 0.
    int i0 = 0;
    MPI_Aint a0 = 0;
    MPI_Datatype t0 = MPI_DATATYPE_NULL;
    if (MPI_Type_get_contents(type, ni, na, nd, ni ? ints.data() : &i0, na ? addrs.data() : &a0,
                              nd ? types.data() : &t0) != MPI_SUCCESS)
      return MPI_ERR_TYPE;
    return MPI_SUCCESS;
  }

  /// Commits the derived parts: the application committed only the whole,
  /// and MPI_Pack needs each part committed. MPI_ERR_TYPE on failure.
  int commit_parts() {
    for (MPI_Datatype& t : types)
      if (derived(t) && MPI_Type_commit(&t) != MPI_SUCCESS) return MPI_ERR_TYPE;
    return MPI_SUCCESS;
  }

 private:
  static bool derived(MPI_Datatype t) {
    int ni, na, nd, comb = MPI_COMBINER_NAMED;
    return t != MPI_DATATYPE_NULL &&
           MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
           comb != MPI_COMBINER_NAMED;
  }
};

}  // namespace zipper::client
