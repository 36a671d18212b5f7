#include "nbc_reduce_binomial.h"

#include <algorithm>

#include "typed_buffer.h"

namespace zipper::coll {

namespace {

// One slice of the vector: `count` (an int) elements, through acc and tmp.
void reduce_slice(Schedule& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                  MPI_Op op, int root, void* acc, void* tmp) {
  const Topology& t = s.topology();
  s.local([=] { return copy_typed(sendbuf, acc, count, type); });
  for (int mask = 1; mask < t.size; mask <<= 1) {
    if (t.rank & mask) {
      s.send(acc, count, type, t.rank - mask);
      s.end_round();
      break;
    }
    if (t.rank + mask >= t.size) continue;
    s.recv(tmp, count, type, t.rank + mask);
    s.end_round();
    // acc = acc (op) tmp; MPI_Reduce_local(in, inout) gives inout = in (op) inout.
    s.local([=] {
      if (count == 0) return MPI_SUCCESS;
      if (int rc = MPI_Reduce_local(acc, tmp, count, type, op)) return rc;
      return copy_typed(tmp, acc, count, type);
    });
  }
  if (t.rank == 0 && root == 0) s.local([=] { return copy_typed(acc, recvbuf, count, type); });
  if (root != 0) {
    if (t.rank == 0) s.send(acc, count, type, root);
    if (t.rank == root) s.recv(recvbuf, count, type, 0);
  }
  // The next slice reuses acc and tmp.
  s.end_round();
}

}  // namespace

void nbc_reduce_binomial(Schedule& s, const void* sendbuf, void* recvbuf, MPI_Aint count,
                         MPI_Datatype type, MPI_Op op, int root) {
  type = s.keep(type);  // the lambdas may run after the caller freed it
  op = s.keep_op(op);   // and so may the operation
  // Slices of at most kReduceSliceBytes (and an int count): the scratch
  // stays two slices whatever the vector, and every message count fits an int.
  const MPI_Aint slice = reduce_slice_elements(type);
  const MPI_Aint n = std::min(count, slice);
  void* acc = s.scratch(n, type);
  void* tmp = s.scratch(n, type);
  MPI_Aint at = 0;
  do {  // count 0 still runs one (empty) slice: every rank takes part
    const int k = static_cast<int>(std::min(slice, count - at));
    reduce_slice(s, elem(sendbuf, at, type), recvbuf ? elem(recvbuf, at, type) : nullptr, k, type,
                 op, root, acc, tmp);
    at += k;
  } while (at < count);
}

}  // namespace zipper::coll
