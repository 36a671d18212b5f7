#include "nbc_barrier_dissemination.h"

namespace zipper::coll {

void nbc_barrier_dissemination(Schedule& s) {
  const Topology& t = s.topology();
  for (int mask = 1; mask < t.size; mask <<= 1) {
    s.send(nullptr, 0, MPI_BYTE, (t.rank + mask) % t.size);
    s.recv(nullptr, 0, MPI_BYTE, (t.rank - mask + t.size) % t.size);
    s.end_round();
  }
}

}  // namespace zipper::coll
