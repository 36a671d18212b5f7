#include "nbc_reduce_binomial.h"

namespace zipper::coll {

void nbc_reduce_binomial(Schedule& s, const void* sendbuf, void* recvbuf, int count,
                         MPI_Datatype type, MPI_Op op, int root) {
  const Topology& t = s.topology();
  type = s.keep(type);  // the lambdas below may run after the caller freed it
  op = s.keep(op);      // and so may the operation
  void* acc = s.scratch(count, type);
  void* tmp = s.scratch(count, type);
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
  if (root == 0) return;
  if (t.rank == 0) s.send(acc, count, type, root);
  if (t.rank == root) s.recv(recvbuf, count, type, 0);
  s.end_round();
}

}  // namespace zipper::coll
