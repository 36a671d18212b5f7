// What an RMA operation's datatypes and op look like on the wire.
// MPI handles are addresses inside each process's Open MPI, so they never
// travel: a predefined element type and a predefined op travel as their index
// in a table both sides share (the same libmmpi); a target datatype travels
// as a description of its constructors (rma_typemap.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "rma_typemap.h"

namespace zipper::client::rma {

/// Index of the predefined element type `t` in the shared table, or -1 when
/// `t` is no predefined type libmmpi knows (then accumulates refuse it:
/// MPI_ERR_TYPE).
int elem_index(MPI_Datatype t);
/// The element type at table index `i`, or MPI_DATATYPE_NULL when out of range
/// (a hostile frame).
MPI_Datatype elem_type(int i);

/// Index of predefined op `op` in the shared table (MPI_REPLACE and MPI_NO_OP
/// included), or -1 for a user op (MPI-3.1 11.3.4 allows predefined ops only).
int op_index(MPI_Op op);
/// The op at table index `i`, or MPI_OP_NULL when out of range.
MPI_Op op_of(int i);
/// Table indexes of MPI_REPLACE and MPI_NO_OP (applied by libmmpi itself).
int replace_index();
int no_op_index();

/// Whether the op at table index `op` is defined on the element type at
/// table index `elem` (MPI-3.1 5.9.2 as Open MPI 4.1 checks it: MPI_MAX on an
/// integer, not on a complex; MPI_BAND on an integer or a byte, not on a
/// float; MPI_MAXLOC on pair types only; MPI_REPLACE and MPI_NO_OP on any).
/// False for indexes out of range (a hostile frame). Where it is false an
/// accumulate is refused (MPI_ERR_OP) before any reduction runs: Open MPI's
/// MPI_Reduce_local would call MPI_COMM_WORLD's error handler, fatal.
bool op_defined(int elem, int op);

/// The single predefined type every basic element of `t` has (MPI-3.1
/// 11.3.4: an accumulate's types are built from one predefined type).
/// Returns MPI_SUCCESS, or MPI_ERR_TYPE when `t` mixes element types or is
/// not a datatype.
int basic_element(MPI_Datatype t, MPI_Datatype* out);

}  // namespace zipper::client::rma
