#include "nbc_direct.h"

namespace zipper::coll {

void nbc_direct(Schedule& s, const std::vector<Block>& sends, const std::vector<Block>& recvs) {
  const Topology& t = s.topology();
  // Receives first, so that messages find them posted; peers in a rotated
  // order, so that not every rank addresses rank 0 first.
  for (int k = 1; k < t.size; ++k) {
    const int r = (t.rank + t.size - k) % t.size;
    if (recvs[r].used) s.recv(recvs[r].buf, recvs[r].count, recvs[r].type, r);
  }
  for (int k = 1; k < t.size; ++k) {
    const int r = (t.rank + k) % t.size;
    if (sends[r].used) s.send(sends[r].buf, sends[r].count, sends[r].type, r);
  }
  const Block in = sends[t.rank], out = recvs[t.rank];
  if (in.used && out.used) {
    const MPI_Datatype itype = s.keep(in.type), otype = s.keep(out.type);
    s.local([=] { return copy_typed(in.buf, in.count, itype, out.buf, out.count, otype); });
  }
  s.end_round();
}

}  // namespace zipper::coll
