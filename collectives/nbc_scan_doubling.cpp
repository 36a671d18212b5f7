#include "nbc_scan_doubling.h"

namespace zipper::coll {

void nbc_scan_doubling(Schedule& s, const void* sendbuf, void* recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, bool exclusive) {
  const Topology& t = s.topology();
  type = s.keep(type);  // the lambdas below may run after the caller freed it
  op = s.keep_op(op);   // and so may the operation
  void* cur = exclusive ? s.scratch(count, type) : recvbuf;
  void* tmp = s.scratch(count, type);
  s.local([=] { return copy_typed(sendbuf, cur, count, type); });
  for (int mask = 1; mask < t.size; mask <<= 1) {
    const bool gets = t.rank - mask >= 0;
    if (t.rank + mask < t.size) s.send(cur, count, type, t.rank + mask);
    if (gets) s.recv(tmp, count, type, t.rank - mask);
    s.end_round();
    // cur = tmp (op) cur: the received ranks precede ours.
    if (gets && count > 0) s.local([=] { return MPI_Reduce_local(tmp, cur, count, type, op); });
  }
  if (!exclusive) return;
  if (t.rank + 1 < t.size) s.send(cur, count, type, t.rank + 1);
  if (t.rank > 0) s.recv(recvbuf, count, type, t.rank - 1);
  s.end_round();
}

}  // namespace zipper::coll
