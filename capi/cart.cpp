// Cartesian topology entry points of the C API (mmpi.h), over any
// communicator: the grid arithmetic is client/cart.h, the communicators
// come from capi/comm_create.h. With reorder, grid positions are placed on
// the clusters by capi/topo_reorder.h (fewest shift edges across the bridge);
// without, rank i of the grid is rank i of the old communicator.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <vector>

#include "comm_create.h"
#include "handles.h"
#include "topo_reorder.h"

using zipper::client::Cart;
using zipper::client::Comm;
using zipper::client::Runtime;
using namespace zipper::capi;

namespace {

int cart_of(MPI_Comm comm, std::shared_ptr<Comm>* c) {
  Runtime* rt;
  if (int rc = lookup(comm, &rt, c)) return rc;
  return (*c)->cart ? MPI_SUCCESS : MPI_ERR_TOPOLOGY;
}

}  // namespace

extern "C" {

int mmpi_impl_Dims_create(int nnodes, int ndims, int dims[]) {
  if (ndims < 0) return MPI_ERR_DIMS;
  std::vector<int> d(dims, dims + ndims);
  if (!zipper::client::dims_create(nnodes, d)) return MPI_ERR_DIMS;
  std::copy(d.begin(), d.end(), dims);
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                          int reorder, MPI_Comm* comm_cart) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm_old, &rt, &c)) return rc;
  if (c->inter) return MPI_ERR_COMM;  // topologies are for intra-communicators
  if (ndims < 0) return MPI_ERR_DIMS;
  Cart cart;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return MPI_ERR_DIMS;
    cart.dims.push_back(dims[i]);
    cart.periods.push_back(periods[i] != 0);
  }
  if (cart.size() > c->size()) return MPI_ERR_DIMS;
  std::shared_ptr<Comm> n;
  const int key = reordered_rank(*rt, *c, cart.size(), cart_edges(cart), reorder != 0, c->rank(),
                                 "MMPI_Cart_create");
  if (int rc = split(*rt, c, key == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, &n)) return rc;
  if (n) n->cart = std::move(cart);
  *comm_cart = n ? handle_of(*n) : MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int mmpi_impl_Topo_test(MPI_Comm comm, int* status) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  *status = c->cart         ? MPI_CART
            : c->graph      ? MPI_GRAPH
            : c->dist_graph ? MPI_DIST_GRAPH
                            : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int mmpi_impl_Cartdim_get(MPI_Comm comm, int* ndims) {
  std::shared_ptr<Comm> c;
  if (int rc = cart_of(comm, &c)) return rc;
  *ndims = c->cart->ndims();
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  std::shared_ptr<Comm> c;
  if (int rc = cart_of(comm, &c)) return rc;
  const Cart& g = *c->cart;
  if (maxdims < g.ndims()) return MPI_ERR_ARG;
  const auto me = g.coords(c->rank());
  for (int i = 0; i < g.ndims(); ++i) {
    dims[i] = g.dims[static_cast<std::size_t>(i)];
    periods[i] = g.periods[static_cast<std::size_t>(i)] ? 1 : 0;
    coords[i] = me[static_cast<std::size_t>(i)];
  }
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  std::shared_ptr<Comm> c;
  if (int rc = cart_of(comm, &c)) return rc;
  const auto r = c->cart->rank(std::vector<int>(coords, coords + c->cart->ndims()));
  if (!r) return MPI_ERR_ARG;
  *rank = *r;
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  std::shared_ptr<Comm> c;
  if (int rc = cart_of(comm, &c)) return rc;
  if (rank < 0 || rank >= c->size()) return MPI_ERR_RANK;
  if (maxdims < c->cart->ndims()) return MPI_ERR_ARG;
  const auto v = c->cart->coords(rank);
  std::copy(v.begin(), v.end(), coords);
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  std::shared_ptr<Comm> c;
  if (int rc = cart_of(comm, &c)) return rc;
  if (direction < 0 || direction >= c->cart->ndims()) return MPI_ERR_ARG;
  const auto [src, dst] = c->cart->shift(c->rank(), direction, disp, MPI_PROC_NULL);
  *rank_source = src;
  *rank_dest = dst;
  return MPI_SUCCESS;
}

int mmpi_impl_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (!c->cart) return MPI_ERR_TOPOLOGY;
  std::vector<bool> remain(static_cast<std::size_t>(c->cart->ndims()));
  for (int i = 0; i < c->cart->ndims(); ++i)
    remain[static_cast<std::size_t>(i)] = remain_dims[i] != 0;
  const auto [color, key] = c->cart->sub_color_key(c->rank(), remain);
  std::shared_ptr<Comm> n;
  if (int rc = split(*rt, c, color, key, &n)) return rc;
  n->cart = c->cart->sub(remain);
  *newcomm = handle_of(*n);
  return MPI_SUCCESS;
}

}  // extern "C"
