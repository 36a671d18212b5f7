// Reduction operations held by operations in flight. MPI lets the
// application free an MPI_Op while a non-blocking reduction that uses it is
// still running (MPI-3.1 section 5.9.5: the op is marked for deallocation
// and "pending operations that use it will complete normally"); Open MPI's
// MPI_Op_free drops the user function at once. A held op's free waits for
// the last holder instead (capi: MMPI_Op_free calls free_when_released).
#pragma once

#include <mpi.h>

namespace zipper::client {

/// Holds an MPI_Op for as long as it lives.
class OpRef {
 public:
  explicit OpRef(MPI_Op op);
  ~OpRef();
  OpRef(OpRef&& o) noexcept : op_(o.op_) { o.op_ = MPI_OP_NULL; }
  OpRef(const OpRef&) = delete;
  OpRef& operator=(const OpRef&) = delete;
  OpRef& operator=(OpRef&&) = delete;
  MPI_Op get() const { return op_; }

 private:
  MPI_Op op_;
};

/// MMPI_Op_free's deferral: true when `op` is held, and its native free
/// then happens when the last OpRef goes (false: free it now).
bool free_when_released(MPI_Op op);

}  // namespace zipper::client
