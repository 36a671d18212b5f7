// Inter-communicator construction and queries of the C API (mmpi.h):
// Intercomm_create, Intercomm_merge, Comm_remote_size, Comm_remote_group,
// and the inter-communicator halves of Comm_dup/split/create (capi/comm.cpp
// calls them). Representation: client/intercomm.h.
#include "intercomm.h"

#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <array>

#include "../collectives/topology.h"
#include "comm_create.h"
#include "errhandler.h"
#include "handles.h"
#include "many_sites.h"

using zipper::client::Comm;
using zipper::client::Runtime;

namespace zipper::capi {

namespace {

// Tags of the native creations (Open MPI's MPI_Comm_create_group) of merged
// communicators.
constexpr int kNativeInterTag = 2929;

// Allgather of `mine` (2 ints) over an intra-communicator.
int allgather2(Runtime& rt, const client::CommPtr& c, std::array<int, 2> mine,
               std::vector<std::array<int, 2>>* all) {
  const coll::Topology t = coll::Topology::of(rt.engine(), c);
  all->assign(static_cast<std::size_t>(c->size()), {0, 0});
  return allgather_any(t, mine.data(), 2, MPI_INT, all->data());
}

}  // namespace

bool is_intercomm(MPI_Comm comm) {
  Runtime* rt = Runtime::get();
  if (rt == nullptr) return false;
  const auto c = rt->comms().find(comm);
  return c && c->inter;
}

int make_intercomm(Runtime& rt, const Comm& parent, const std::vector<int>& local,
                   const std::vector<int>& remote, int tag, std::shared_ptr<Comm>* out) {
  out->reset();
  const int me = rt.rank();
  const auto pos = std::find(local.begin(), local.end(), me);
  if (pos == local.end() || local.empty() || remote.empty()) return MPI_ERR_GROUP;
  for (int w : remote)
    if (std::find(local.begin(), local.end(), w) != local.end()) return MPI_ERR_GROUP;
  const int local_rank = static_cast<int>(pos - local.begin());
  // The merged order: the group holding the lowest world rank first, the
  // same answer in both groups.
  const bool local_first = *std::min_element(local.begin(), local.end()) <
                           *std::min_element(remote.begin(), remote.end());
  std::vector<int> both = local_first ? local : remote;
  const std::vector<int>& second = local_first ? remote : local;
  both.insert(both.end(), second.begin(), second.end());
  std::shared_ptr<Comm> merged;
  if (int rc = create_group(rt, rt.world(), both, tag, &merged)) return rc;
  auto info = std::make_shared<client::InterInfo>();
  info->local = client::RankMap(local, rt.sites());
  info->merged = merged;
  info->local_offset = local_first ? 0 : static_cast<int>(remote.size());
  info->remote_offset = local_first ? static_cast<int>(local.size()) : 0;

  // The inter-communicator's own context id, agreed over both groups.
  unsigned cid = 0;
  {
    const coll::Topology t = coll::Topology::of(rt.engine(), merged);
    const unsigned next = rt.comms().next_cid();
    if (int rc = allreduce_any(t, &next, &cid, 1, MPI_UNSIGNED, MPI_MAX)) return rc;
  }
  rt.comms().take(cid);

  // Native part: a duplicate of the merged native communicator (this
  // cluster's members of both groups, the first group's first), where the
  // remote group's members start at native_base. Not an Open MPI
  // inter-communicator: Open MPI 4.1's MPI_Comm_idup of one hangs when
  // other idups of the process overlap it (MMPI_Comm_idup duplicates this).
  client::RankMap remote_map(remote, rt.sites());
  const int native_base = local_first ? static_cast<int>(info->local.local_members().size()) : 0;
  MPI_Comm dup = MPI_COMM_NULL;
  if (int rc = MPI_Comm_dup(merged->native(), &dup)) return rc;
  client::NativeComm native(dup);
  MPI_Comm_set_errhandler(native.get(), MPI_ERRORS_RETURN);
  auto c = std::make_shared<Comm>(std::move(remote_map), local_rank, cid, std::move(native),
                                  client::NativeComm());
  c->inter = std::move(info);
  c->native_base = native_base;
  inherit_errhandler(parent, *c);
  rt.comms().add(handle_of(*c), c);
  *out = std::move(c);
  return MPI_SUCCESS;
}

// The members of both groups with the same colour, ordered by (key, rank).
int inter_split(Runtime& rt, const client::CommPtr& c, int color, int key,
                std::shared_ptr<Comm>* out) {
  out->reset();
  if (color < 0 && color != MPI_UNDEFINED) return MPI_ERR_ARG;
  const zipper::client::InterInfo& in = *c->inter;
  std::vector<std::array<int, 2>> all;
  if (int rc = allgather2(rt, in.merged, {color, key}, &all)) return rc;
  if (color == MPI_UNDEFINED) return MPI_SUCCESS;
  auto members = [&](int offset, const client::RankMap& group) {
    std::vector<int> ranks;
    for (int r = 0; r < group.size(); ++r)
      if (all[static_cast<std::size_t>(offset + r)][0] == color) ranks.push_back(r);
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
      return all[static_cast<std::size_t>(offset + a)][1] <
             all[static_cast<std::size_t>(offset + b)][1];
    });
    std::vector<int> world;
    for (int r : ranks) world.push_back(group.world(r));
    return world;
  };
  const std::vector<int> local = members(in.local_offset, in.local);
  const std::vector<int> remote = members(in.remote_offset, c->map());
  if (remote.empty()) {
    // MPI: a colour with no remote members gives MPI_COMM_NULL; the others
    // of this colour still take part in nothing more.
    return MPI_SUCCESS;
  }
  return make_intercomm(rt, *c, local, remote, kNativeInterTag + 2 + (color & 0xffff), out);
}

int inter_create(Runtime& rt, const client::CommPtr& c, const std::vector<int>& group,
                 std::shared_ptr<Comm>* out) {
  // Each group names its own subgroup: its position there is the key.
  const int pos =
      static_cast<int>(std::find(group.begin(), group.end(), rt.rank()) - group.begin());
  const bool in = pos < static_cast<int>(group.size());
  return inter_split(rt, c, in ? 0 : MPI_UNDEFINED, in ? pos : 0, out);
}

void inter_free(Runtime& rt, const Comm& c) {
  rt.comms().remove(handle_of(*c.inter->merged));
  rt.comms().remove(handle_of(c));
}

}  // namespace zipper::capi

using namespace zipper::capi;

extern "C" {

int mmpi_impl_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                               int remote_leader, int tag, MPI_Comm* newintercomm) {
  Runtime* rt;
  std::shared_ptr<Comm> lc;
  if (int rc = lookup(local_comm, &rt, &lc)) return rc;
  if (lc->inter) return MPI_ERR_COMM;
  if (newintercomm == nullptr) return MPI_ERR_ARG;
  if (local_leader < 0 || local_leader >= lc->size()) return MPI_ERR_RANK;
  if (tag < 0) return MPI_ERR_TAG;
  const std::vector<int>& local = lc->map().world_ranks();
  // The leaders swap their groups' world ranks over peer_comm; each leader
  // then broadcasts the remote group in its own group.
  std::vector<int> remote;
  int n = 0;
  if (lc->rank() == local_leader) {
    int mine = lc->size();
    if (int rc = mmpi_impl_Sendrecv(&mine, 1, MPI_INT, remote_leader, tag, &n, 1, MPI_INT,
                                    remote_leader, tag, peer_comm, MPI_STATUS_IGNORE))
      return rc;
    remote.resize(static_cast<std::size_t>(n));
    if (int rc = mmpi_impl_Sendrecv(local.data(), mine, MPI_INT, remote_leader, tag, remote.data(),
                                    n, MPI_INT, remote_leader, tag, peer_comm, MPI_STATUS_IGNORE))
      return rc;
  }
  if (int rc = mmpi_impl_Bcast(&n, 1, MPI_INT, local_leader, local_comm)) return rc;
  remote.resize(static_cast<std::size_t>(n));
  if (int rc = mmpi_impl_Bcast(remote.data(), n, MPI_INT, local_leader, local_comm)) return rc;
  std::shared_ptr<Comm> ic;
  if (int rc = make_intercomm(*rt, *lc, local, remote, tag, &ic)) return rc;
  *newintercomm = handle_of(*ic);
  return MPI_SUCCESS;
}

int mmpi_impl_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(intercomm, &rt, &c)) return rc;
  if (!c->inter) return MPI_ERR_COMM;
  if (newintracomm == nullptr) return MPI_ERR_ARG;
  const zipper::client::InterInfo& in = *c->inter;
  // MPI: the group whose members passed high = false comes first; with
  // equal values, the merged communicator's first group comes first.
  std::vector<std::array<int, 2>> all;
  if (int rc = allgather2(*rt, in.merged, {high ? 1 : 0, 0}, &all)) return rc;
  const int local_high = all[static_cast<std::size_t>(in.local_offset)][0];
  const int remote_high = all[static_cast<std::size_t>(in.remote_offset)][0];
  const bool local_first = local_high != remote_high ? local_high == 0 : in.local_offset == 0;
  std::vector<int> members = local_first ? in.local.world_ranks() : c->map().world_ranks();
  const std::vector<int>& second = local_first ? c->map().world_ranks() : in.local.world_ranks();
  members.insert(members.end(), second.begin(), second.end());
  std::shared_ptr<Comm> n;
  if (int rc = create_group(*rt, rt->world(), members, kNativeInterTag + 3, &n)) return rc;
  inherit_errhandler(*c, *n);
  *newintracomm = handle_of(*n);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_remote_size(MPI_Comm comm, int* size) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (!c->inter) return MPI_ERR_COMM;
  if (size == nullptr) return MPI_ERR_ARG;
  *size = c->size();
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (!c->inter) return MPI_ERR_COMM;
  if (group == nullptr) return MPI_ERR_ARG;
  *group = new_group(zipper::client::Group{c->map().world_ranks()});
  return MPI_SUCCESS;
}

}  // extern "C"
