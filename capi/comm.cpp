// Communicator entry points of the C API (mmpi.h): duplicate, split, create,
// free, compare, name, attributes, rank and size; the job's layout (MMPIX_Layout).
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "comm_create.h"
#include "handles.h"
#include "intercomm.h"

using zipper::client::Comm;
using zipper::client::Runtime;
using namespace zipper::capi;

namespace {

// The out handle of a constructor: the new communicator, or MPI_COMM_NULL.
void set_out(const std::shared_ptr<Comm>& c, MPI_Comm* out) {
  *out = c ? handle_of(*c) : MPI_COMM_NULL;
}

}  // namespace

extern "C" {

int mmpi_impl_Comm_rank(MPI_Comm comm, int* rank) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  *rank = c->rank();
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_size(MPI_Comm comm, int* size) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  *size = c->inter ? c->inter->local_size() : c->size();  // the local group's
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  std::shared_ptr<Comm> n;
  if (c->inter) {
    // Through the idup path (capi/comm_idup.cpp), waited for at once: its
    // native part is Open MPI's duplicate of the handle, so the attribute
    // copy callbacks run (MPICH attr/attric), which a new
    // inter-communicator built from its groups would not do.
    MPI_Request req = MPI_REQUEST_NULL;
    if (int rc = mmpi_impl_Comm_idup(comm, newcomm, &req)) return rc;
    return mmpi_impl_Wait(&req, MPI_STATUS_IGNORE);
  }
  // Open MPI duplicates the handle's native communicator: the attributes'
  // copy callbacks run onto the new one.
  if (int rc = split(*rt, c, 0, c->rank(), &n, handle_of(*c))) return rc;
  n->cart = c->cart;  // MPI: the topology is copied, the name is not
  for (int k : c->attr_keyvals) {
    void* v = nullptr;
    int flag = 0;
    if (MPI_Comm_get_attr(handle_of(*n), k, &v, &flag) == MPI_SUCCESS && flag)
      n->attr_keyvals.push_back(k);
  }
  n->graph = c->graph;
  n->dist_graph = c->dist_graph;
  set_out(n, newcomm);
  return MPI_SUCCESS;
}

// The hints go to the new handle's native communicator (MMPI_Comm_get_info
// reads them there); libmmpi itself follows none.
int mmpi_impl_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  if (newcomm == nullptr) return MPI_ERR_ARG;
  if (int rc = mmpi_impl_Comm_dup(comm, newcomm)) return rc;
  if (info != MPI_INFO_NULL) return MPI_Comm_set_info(*newcomm, info);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (int rc = MPI_Comm_set_attr(handle_of(*c), comm_keyval, attribute_val)) return rc;
  auto& keys = c->attr_keyvals;
  if (std::find(keys.begin(), keys.end(), comm_keyval) == keys.end()) keys.push_back(comm_keyval);
  return MPI_SUCCESS;
}

// The Fortran bindings set and delete attributes through Open MPI's own
// Fortran routines (Fortran stores values, C pointers) and tell libmmpi here
// which keyvals the communicator holds. Returns MPI_ERR_COMM for a handle that
// is no MMPI communicator.
extern "C" int mmpi_note_comm_keyval(MPI_Comm comm, int keyval, int present) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  auto& keys = c->attr_keyvals;
  const auto at = std::find(keys.begin(), keys.end(), keyval);
  if (!present && at != keys.end()) keys.erase(at);
  if (present && at == keys.end()) keys.push_back(keyval);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (int rc = MPI_Comm_delete_attr(handle_of(*c), comm_keyval)) return rc;
  auto& keys = c->attr_keyvals;
  keys.erase(std::remove(keys.begin(), keys.end(), comm_keyval), keys.end());
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  std::shared_ptr<Comm> n;
  if (int rc = c->inter ? zipper::capi::inter_split(*rt, c, color, key, &n)
                        : split(*rt, c, color, key, &n))
    return rc;
  set_out(n, newcomm);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                              MPI_Comm* newcomm) {
  (void)info;
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) return MPI_ERR_ARG;
  // A node lies in one cluster: Open MPI finds this node's members among
  // this cluster's; the colour is the lowest of their ranks. Every member of
  // this cluster enters Open MPI's split, also one passing MPI_UNDEFINED
  // (it gets MPI_COMM_NULL there): the split is collective over them all.
  MPI_Comm node = MPI_COMM_NULL;
  if (int rc = MPI_Comm_split_type(c->native(), split_type, 0, MPI_INFO_NULL, &node)) return rc;
  zipper::client::NativeComm owned(node);
  int color = MPI_UNDEFINED;
  if (node != MPI_COMM_NULL) {
    int mine = c->rank();
    if (int rc = MPI_Allreduce(&mine, &color, 1, MPI_INT, MPI_MIN, node)) return rc;
  }
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, color, key, &n)) return rc;
  set_out(n, newcomm);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  const zipper::client::Group* g = find_group(group);
  if (g == nullptr) return MPI_ERR_GROUP;
  if (c->inter) {  // each group names a subgroup of its own
    for (int w : g->world)
      if (c->inter->local.rank_of_world(w) < 0) return MPI_ERR_GROUP;
    std::shared_ptr<Comm> n;
    if (int rc = zipper::capi::inter_create(*rt, c, g->world, &n)) return rc;
    set_out(n, newcomm);
    return MPI_SUCCESS;
  }
  for (int w : g->world)
    if (c->map().rank_of_world(w) < 0) return MPI_ERR_GROUP;  // not a subgroup of comm's
  const int in_group = g->rank_of_world(c->map().world(c->rank()));
  // MPI-2.2: the group may differ between processes if the groups are
  // disjoint; each group becomes a communicator of its own. The colour names
  // the group by its first member (a rank of comm, so it is non-negative).
  const int color =
      in_group < 0 || g->world.empty() ? MPI_UNDEFINED : c->map().rank_of_world(g->world.front());
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, color, in_group, &n)) return rc;
  set_out(n, newcomm);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  const zipper::client::Group* g = find_group(group);
  if (g == nullptr) return MPI_ERR_GROUP;
  if (tag < 0) return MPI_ERR_TAG;
  std::shared_ptr<Comm> n;
  if (int rc = create_group(*rt, c, g->world, tag, &n)) return rc;
  set_out(n, newcomm);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_free(MPI_Comm* comm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (comm == nullptr) return MPI_ERR_ARG;
  if (int rc = lookup(*comm, &rt, &c)) return rc;
  if (c == rt->world() || *comm == MPI_COMM_SELF) return MPI_ERR_COMM;
  // Operations still running keep the communicator (Request::comm).
  if (c->inter) zipper::capi::inter_free(*rt, *c);
  rt->comms().remove(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  Runtime* rt;
  std::shared_ptr<Comm> a, b;
  if (int rc = lookup(comm1, &rt, &a)) return rc;
  if (int rc = lookup(comm2, &rt, &b)) return rc;
  if (a == b) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  const auto& wa = a->map().world_ranks();
  const auto& wb = b->map().world_ranks();
  if (wa == wb) {
    *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
  }
  auto sa = wa, sb = wb;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  *result = sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_group(MPI_Comm comm, MPI_Group* group) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  // An inter-communicator's group is its local group (MPI-3.1 §6.6.1).
  *group = new_group(
      zipper::client::Group{c->inter ? c->inter->local.world_ranks() : c->map().world_ranks()});
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (comm_name == nullptr) return MPI_ERR_ARG;
  c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (comm_name == nullptr || resultlen == nullptr) return MPI_ERR_ARG;
  std::memcpy(comm_name, c->name.c_str(), c->name.size() + 1);
  *resultlen = static_cast<int>(c->name.size());
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  // Predefined attributes are pointers to int that outlive the call.
  static int wtime_is_global = 0;  // two clusters' clocks are not synchronised
  static int universe_size = 0;
  if (comm_keyval == MPI_WTIME_IS_GLOBAL) {
    *static_cast<int**>(attribute_val) = &wtime_is_global;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (comm_keyval == MPI_UNIVERSE_SIZE) {
    universe_size = rt->size();  // no dynamic processes: the universe is the job
    *static_cast<int**>(attribute_val) = &universe_size;
    *flag = 1;
    return MPI_SUCCESS;
  }
  // MPI_TAG_UB (frames carry 32-bit tags; Open MPI's bound is the smaller),
  // MPI_HOST, MPI_IO, MPI_APPNUM: Open MPI's own values, which it keeps on
  // MPI_COMM_WORLD only. User keyvals: the native communicator that
  // Comm_set_attr and Comm_delete_attr pass the handle to (for
  // MMPI_COMM_SELF that is Open MPI's MPI_COMM_SELF, not c->native()).
  const bool predefined = comm_keyval == MPI_TAG_UB || comm_keyval == MPI_HOST ||
                          comm_keyval == MPI_IO || comm_keyval == MPI_APPNUM ||
                          comm_keyval == MPI_LASTUSEDCODE;
  return MPI_Comm_get_attr(predefined ? MPI_COMM_WORLD : handle_of(*c), comm_keyval, attribute_val,
                           flag);
}

// The MPI-1 names (deprecated since MPI-2.0, still in MPI-3.1): the same
// calls as Comm_get_attr / Comm_set_attr / Comm_delete_attr.
int mmpi_impl_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return mmpi_impl_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int mmpi_impl_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return mmpi_impl_Comm_set_attr(comm, keyval, attribute_val);
}

int mmpi_impl_Attr_delete(MPI_Comm comm, int keyval) {
  return mmpi_impl_Comm_delete_attr(comm, keyval);
}

int mmpi_impl_Comm_test_inter(MPI_Comm comm, int* flag) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  *flag = c->inter ? 1 : 0;
  return MPI_SUCCESS;
}

}  // extern "C"

extern "C" int MMPIX_Layout(int* ranks_low, int* ranks_high, int* forwarders) {
  const Runtime* rt = Runtime::get();
  if (rt == nullptr) return MPI_ERR_OTHER;
  // The two-site view of the site map: the first site, and every other.
  const int first = rt->sites().ranks_in(0).size();
  if (ranks_low) *ranks_low = first;
  if (ranks_high) *ranks_high = rt->sites().world_size() - first;
  if (forwarders) *forwarders = rt->forwarders();
  return MPI_SUCCESS;
}
