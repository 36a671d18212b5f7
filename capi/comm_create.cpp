#include "comm_create.h"

#include <algorithm>
#include <array>
#include <vector>

#include "../collectives/allgather_two_level.h"
#include "../collectives/allreduce_two_tier.h"

namespace zipper::capi {

MPI_Comm handle_of(const client::Comm& c) { return c.native(); }

int split(client::Runtime& rt, const client::CommPtr& parent, int color, int key,
          std::shared_ptr<client::Comm>* out) {
  out->reset();
  if (color < 0 && color != MPI_UNDEFINED) return MPI_ERR_ARG;
  const coll::Topology t = coll::Topology::of(rt.engine(), parent);
  const int n = parent->size();
  std::vector<std::array<int, 2>> all(static_cast<std::size_t>(n));
  const std::array<int, 2> mine{color, key};
  if (int rc = coll::allgather_two_level(t, mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT))
    return rc;
  // The context id: no member of the parent uses it yet.
  const unsigned next = rt.comms().next_cid();
  unsigned cid = 0;
  if (int rc = coll::allreduce_two_tier(t, &next, &cid, 1, MPI_UNSIGNED, MPI_MAX)) return rc;
  rt.comms().take(cid);

  std::vector<int> members;  // parent ranks, in new rank order
  if (color != MPI_UNDEFINED) {
    for (int r = 0; r < n; ++r)
      if (all[static_cast<std::size_t>(r)][0] == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return all[static_cast<std::size_t>(a)][1] < all[static_cast<std::size_t>(b)][1];
    });
  }
  const int new_rank =
      color == MPI_UNDEFINED
          ? 0
          : static_cast<int>(std::find(members.begin(), members.end(), parent->rank()) -
                             members.begin());
  // This cluster's members of the same colour, in new rank order (key = new rank).
  MPI_Comm native = MPI_COMM_NULL;
  if (int rc = MPI_Comm_split(parent->native(), color, new_rank, &native)) return rc;
  if (color == MPI_UNDEFINED) return MPI_SUCCESS;
  client::NativeComm nc(native);
  MPI_Comm_set_errhandler(native, MPI_ERRORS_RETURN);
  MPI_Comm coll = MPI_COMM_NULL;
  if (int rc = MPI_Comm_dup(native, &coll)) return rc;
  client::NativeComm ncoll(coll);

  std::vector<int> world(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) world[i] = parent->map().world(members[i]);
  client::RankMap map(std::move(world), rt.size(), rt.offset(), rt.offset() + rt.local_size());
  auto c = std::make_shared<client::Comm>(std::move(map), new_rank, cid, std::move(nc),
                                          std::move(ncoll));
  rt.comms().add(handle_of(*c), c);
  *out = std::move(c);
  return MPI_SUCCESS;
}

}  // namespace zipper::capi
