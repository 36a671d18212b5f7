// A committed MPI datatype owned by a test: freed when it leaves scope, so
// that a failing assertion leaks nothing into the next test.
#pragma once

#include <mpi.h>

namespace zipper::test {

struct CommittedType {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  /// Takes `x` (an uncommitted new type) and commits it.
  explicit CommittedType(MPI_Datatype x) : t(x) { MPI_Type_commit(&t); }
  CommittedType(const CommittedType&) = delete;
  CommittedType& operator=(const CommittedType&) = delete;
  ~CommittedType() { MPI_Type_free(&t); }
};

}  // namespace zipper::test
