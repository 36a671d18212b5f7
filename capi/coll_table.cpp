#include "coll_table.h"

#include "intercomm.h"

namespace zipper::capi {

namespace {

// The blocking forms on an inter-communicator: the schedule plus a wait.
int inter_rooted(const Rooted& a, int root, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  return inter_wait(inter_irooted(a, root, comm, &r), &r);
}

constexpr CollectiveTable kIntra{intra_rooted, intra_rooted_v, intra_irooted, intra_irooted_v};
constexpr CollectiveTable kInter{inter_rooted, inter_rooted, inter_irooted, inter_irooted};

}  // namespace

const CollectiveTable& collectives_of(MPI_Comm comm) {
  return is_intercomm(comm) ? kInter : kIntra;
}

}  // namespace zipper::capi
