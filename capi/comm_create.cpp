#include "comm_create.h"

#include <algorithm>
#include <array>
#include <vector>

#include "comm_idup.h"
#include "errhandler.h"
#include "handles.h"
#include "many_sites.h"

namespace zipper::capi {

int split(client::Runtime& rt, const client::CommPtr& parent, int color, int key,
          std::shared_ptr<client::Comm>* out, MPI_Comm dup_of) {
  out->reset();
  if (color < 0 && color != MPI_UNDEFINED) return MPI_ERR_ARG;
  // The parent's idups started before this call finish first (comm_idup.h).
  complete_idups_of(rt, *parent);
  const coll::Topology t = coll::Topology::of(rt.engine(), parent);
  const int n = parent->size();
  // One cross-cluster round per new communicator: each rank's context-id
  // proposal (its next_cid()) travels with its colour and key, and the id is
  // the largest proposal, free on every member. A separate MAX allreduce
  // after the allgather was a second round trip through zipperd, about half
  // the cost of a split across the clusters (MPICH comm/ctxsplit).
  std::vector<int> members;  // parent ranks, in new rank order
  unsigned cid = 0;
  bool colours_apart = false;  // no two members in this cluster share a colour
  if (dup_of != MPI_COMM_NULL) {
    // Comm_dup keeps its two rounds (a barrier, then the MAX allreduce):
    // with one, and before complete_idups_of() above, MPICH
    // comm/comm_idup_comm hung at 1+3 in 2 of 32 runs (Open MPI's blocking
    // duplicate of the handle overlapping the application's idups of it).
    if (int rc = barrier_any(t)) return rc;
    const unsigned next = rt.comms().next_cid();
    if (int rc = allreduce_any(t, &next, &cid, 1, MPI_UNSIGNED, MPI_MAX)) return rc;
    for (int r = 0; r < n; ++r) members.push_back(r);
  } else {
    // (colour, key, proposal) per rank, as unsigned: the conversions both
    // ways are exact in C++20.
    std::vector<std::array<unsigned, 3>> all(static_cast<std::size_t>(n));
    const std::array<unsigned, 3> mine{static_cast<unsigned>(color), static_cast<unsigned>(key),
                                       rt.comms().next_cid()};
    if (int rc = allgather_any(t, mine.data(), 3, MPI_UNSIGNED, all.data())) return rc;
    for (const auto& a : all) cid = std::max(cid, a[2]);
    std::vector<unsigned> local_colours;
    for (int r : parent->map().local_members())
      if (static_cast<int>(all[static_cast<std::size_t>(r)][0]) != MPI_UNDEFINED)
        local_colours.push_back(all[static_cast<std::size_t>(r)][0]);
    std::sort(local_colours.begin(), local_colours.end());
    colours_apart =
        std::adjacent_find(local_colours.begin(), local_colours.end()) == local_colours.end();
    if (color != MPI_UNDEFINED) {
      for (int r = 0; r < n; ++r)
        if (static_cast<int>(all[static_cast<std::size_t>(r)][0]) == color) members.push_back(r);
      std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
        return static_cast<int>(all[static_cast<std::size_t>(a)][1]) <
               static_cast<int>(all[static_cast<std::size_t>(b)][1]);
      });
    }
  }
  rt.comms().take(cid);

  const int new_rank =
      color == MPI_UNDEFINED
          ? 0
          : static_cast<int>(std::find(members.begin(), members.end(), parent->rank()) -
                             members.begin());
  // This cluster's members of the same colour, in new rank order (key = new rank).
  MPI_Comm native = MPI_COMM_NULL;
  if (dup_of != MPI_COMM_NULL) {
    if (int rc = MPI_Comm_dup(dup_of, &native)) return rc;
  } else if (colours_apart) {
    // Each native part has one member: a communicator over MPI_COMM_SELF,
    // made without the cluster. Every member here knows all colours, so all
    // skip Open MPI's split together; it is a collective over the cluster
    // (an allgather and its own context-id agreement), the largest cost of a split
    // across the clusters after the allgather above.
    if (color == MPI_UNDEFINED) return MPI_SUCCESS;
    if (int rc = MPI_Comm_split(MPI_COMM_SELF, 0, 0, &native)) return rc;
  } else if (int rc = MPI_Comm_split(parent->native(), color, new_rank, &native)) {
    return rc;
  }
  if (color == MPI_UNDEFINED) return MPI_SUCCESS;
  client::NativeComm nc(native);
  MPI_Comm_set_errhandler(native, MPI_ERRORS_RETURN);
  // The collectives' duplicate carries no attributes: for Comm_dup it is
  // made from the parent's own (same members, same order), so the copy
  // callbacks run once, onto the new handle only.
  MPI_Comm coll = MPI_COMM_NULL;
  if (int rc = MPI_Comm_dup(dup_of != MPI_COMM_NULL ? parent->native_coll() : native, &coll))
    return rc;
  client::NativeComm ncoll(coll);

  std::vector<int> world(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) world[i] = parent->map().world(members[i]);
  client::RankMap map(std::move(world), rt.sites());
  auto c = std::make_shared<client::Comm>(std::move(map), new_rank, cid, std::move(nc),
                                          std::move(ncoll));
  inherit_errhandler(*parent, *c);
  rt.comms().add(handle_of(*c), c);
  *out = std::move(c);
  return MPI_SUCCESS;
}

int create_group(client::Runtime& rt, const client::CommPtr& parent,
                 const std::vector<int>& members, int tag, std::shared_ptr<client::Comm>* out) {
  out->reset();
  const int me = rt.rank();
  const auto pos = std::find(members.begin(), members.end(), me);
  if (pos == members.end()) return MPI_ERR_GROUP;
  const int new_rank = static_cast<int>(pos - members.begin());
  // This cluster's members, as ranks of the parent's native communicator, in new rank order.
  const client::RankMap& pm = parent->map();
  std::vector<int> native_ranks;
  for (int w : members) {
    const int r = pm.rank_of_world(w);
    if (r < 0) return MPI_ERR_GROUP;
    if (pm.is_local(r)) native_ranks.push_back(pm.index_in_cluster(r));
  }
  MPI_Group parent_group = MPI_GROUP_NULL, local_group = MPI_GROUP_NULL;
  MPI_Comm_group(parent->native(), &parent_group);
  MPI_Group_incl(parent_group, static_cast<int>(native_ranks.size()), native_ranks.data(),
                 &local_group);
  MPI_Comm native = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(parent->native(), local_group, tag, &native);
  MPI_Group_free(&local_group);
  MPI_Group_free(&parent_group);
  if (rc != MPI_SUCCESS) return rc;
  client::NativeComm nc(native);
  MPI_Comm_set_errhandler(native, MPI_ERRORS_RETURN);
  auto dup = [](MPI_Comm c) {
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Comm_dup(c, &d);
    return client::NativeComm(d);
  };
  // Agree on the context id among the new members only: a bootstrap
  // communicator over them that talks on the parent's contexts.
  unsigned cid = 0;
  {
    auto boot = std::make_shared<client::Comm>(client::RankMap(members, rt.sites()), new_rank,
                                               parent->cid(), client::NativeComm(), dup(native));
    const coll::Topology t = coll::Topology::of(rt.engine(), boot);
    const unsigned next = rt.comms().next_cid();
    if (int arc = allreduce_any(t, &next, &cid, 1, MPI_UNSIGNED, MPI_MAX)) return arc;
  }
  rt.comms().take(cid);
  client::NativeComm ncoll = dup(native);
  auto c = std::make_shared<client::Comm>(client::RankMap(members, rt.sites()), new_rank, cid,
                                          std::move(nc), std::move(ncoll));
  inherit_errhandler(*parent, *c);
  rt.comms().add(handle_of(*c), c);
  *out = std::move(c);
  return MPI_SUCCESS;
}

}  // namespace zipper::capi
