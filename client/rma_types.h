// What an RMA operation's datatypes and op look like on the wire (issue 26).
// MPI handles are addresses inside each process's Open MPI, so they never
// travel: a predefined element type and a predefined op travel as their index
// in a table both sides share (the same libmmpi), and a target datatype travels
// as its flattened typemap, a list of byte blocks relative to the target
// address. The target then needs no datatype of its own and can check every
// block against its window before touching memory.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace zipper::client::rma {

/// One contiguous run of a flattened typemap: `len` bytes at byte offset
/// `offset` from the buffer address (the target address at the target).
struct Block {
  std::int64_t offset = 0;
  std::uint64_t len = 0;
};

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

/// The single predefined type every basic element of `t` has (MPI-3.1
/// 11.3.4: an accumulate's types are built from one predefined type).
/// Returns MPI_SUCCESS, or MPI_ERR_TYPE when `t` mixes element types or is
/// not a datatype.
int basic_element(MPI_Datatype t, MPI_Datatype* out);

/// Flattens `count` elements of `t` into blocks (offsets in bytes from the
/// buffer address, in typemap order, adjacent runs merged). `*bytes` gets the
/// packed size. Returns MPI_SUCCESS, MPI_ERR_COUNT or MPI_ERR_TYPE.
/// Cost: O(1) for contiguous types; otherwise O(span) with span the bytes
/// between the typemap's lowest and highest address, done 1-4 times.
int flatten(MPI_Datatype t, int count, std::vector<Block>* out, std::uint64_t* bytes);

}  // namespace zipper::client::rma
