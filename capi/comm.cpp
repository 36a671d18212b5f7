// Communicator entry points of the C API (mmpi.h): duplicate, split, create,
// free, compare, name, attributes, rank and size.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "comm_create.h"
#include "handles.h"

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
  *size = c->size();
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, 0, c->rank(), &n)) return rc;
  n->cart = c->cart;  // MPI: the topology is copied, the name is not
  set_out(n, newcomm);
  return MPI_SUCCESS;
}

int mmpi_impl_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, color, key, &n)) return rc;
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
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED) {
    // A node lies in one cluster: Open MPI finds this node's members among
    // this cluster's; the colour is the lowest of their ranks.
    MPI_Comm node = MPI_COMM_NULL;
    if (int rc = MPI_Comm_split_type(c->native(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node))
      return rc;
    zipper::client::NativeComm owned(node);
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
  for (int w : g->world)
    if (c->map().rank_of_world(w) < 0) return MPI_ERR_GROUP;  // not a subgroup of comm's
  const int in_group = g->rank_of_world(c->map().world(c->rank()));
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, in_group < 0 ? MPI_UNDEFINED : 0, in_group, &n)) return rc;
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
  *group = new_group(zipper::client::Group{c->map().world_ranks()});
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
  // MPI_COMM_WORLD only. User keyvals: the communicator's native one.
  const bool predefined = comm_keyval == MPI_TAG_UB || comm_keyval == MPI_HOST ||
                          comm_keyval == MPI_IO || comm_keyval == MPI_APPNUM ||
                          comm_keyval == MPI_LASTUSEDCODE;
  return MPI_Comm_get_attr(predefined ? MPI_COMM_WORLD : c->native(), comm_keyval, attribute_val,
                           flag);
}

int mmpi_impl_Comm_test_inter(MPI_Comm comm, int* flag) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  *flag = 0;  // inter-communicators are not offered
  return MPI_SUCCESS;
}

}  // extern "C"
