#include "nbc_neighbor_exchange.h"

#include <mpi.h>

namespace zipper::coll {

void nbc_neighbor_exchange(Schedule& s, const std::vector<int>& in, const std::vector<Block>& recvs,
                           const std::vector<int>& out, const std::vector<Block>& sends,
                           bool cartesian) {
  // Receives first, so that the messages find them posted.
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i] != MPI_PROC_NULL && recvs[i].used)
      s.recv(recvs[i].buf, recvs[i].count, recvs[i].type, in[i]);
  // Cartesian: +1 before -1 in each dimension (the header says why).
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t i = cartesian ? k ^ 1 : k;
    if (out[i] != MPI_PROC_NULL && sends[i].used)
      s.send(sends[i].buf, sends[i].count, sends[i].type, out[i]);
  }
  s.end_round();
}

}  // namespace zipper::coll
