// Neighbourhood collectives of the C API (mmpi.h), MPI-3.1 §7.6-7.7: on
// Cartesian, graph and distributed-graph communicators, blocking and
// non-blocking. Each builds one collectives/nbc_neighbor_exchange.h round
// over the communicator's neighbour lists (client/graph_topo.h); the
// blocking forms start it and wait. Neighbours in the other cluster are
// reached through zipperd, the others natively.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <vector>

#include "../collectives/nbc_neighbor_exchange.h"
#include "../collectives/typed_buffer.h"
#include "nbc_launch.h"

using namespace zipper::capi;
using zipper::client::NeighbourLists;
using zipper::coll::Block;
using zipper::coll::elem;
using zipper::coll::Topology;

namespace {

// The communicator's neighbours; MPI_ERR_TOPOLOGY without a topology.
int enter_neighbours(MPI_Comm comm, MPI_Request* request, Topology* t, NeighbourLists* l) {
  if (int rc = enter(comm, t)) return rc;
  if (request == nullptr) return MPI_ERR_REQUEST;
  const zipper::client::Comm& c = *t->comm;
  if (c.cart)
    *l = zipper::client::neighbours_of(*c.cart, c.rank(), MPI_PROC_NULL);
  else if (c.graph)
    *l = zipper::client::neighbours_of(*c.graph, c.rank());
  else if (c.dist_graph)
    *l = zipper::client::neighbours_of(*c.dist_graph);
  else
    return MPI_ERR_TOPOLOGY;
  return MPI_SUCCESS;
}

Block at(const void* buf, MPI_Aint index, int count, MPI_Datatype type) {
  return Block{const_cast<void*>(elem(buf, index, type)), count, type, true};
}

Block at_byte(const void* buf, MPI_Aint offset, int count, MPI_Datatype type) {
  return Block{static_cast<char*>(const_cast<void*>(buf)) + offset, count, type, true};
}

// Counts and types of `n` blocks (counts may be null when n == 0).
int check_blocks(std::size_t n, const int counts[], const void* displs, MPI_Datatype type) {
  if (n > 0 && displs == nullptr) return MPI_ERR_ARG;
  return check_bufs(static_cast<int>(n), counts, type);
}

int exchange(const char* what, const Topology& t, const NeighbourLists& l,
             const std::vector<Block>& recvs, const std::vector<Block>& sends,
             MPI_Request* request) {
  auto s = nbc_schedule(t);
  zipper::coll::nbc_neighbor_exchange(*s, l.in, recvs, l.out, sends, t.comm->cart.has_value());
  return nbc_launch(what, std::move(s), request);
}

int wait(int rc, MPI_Request* request) {
  return rc == MPI_SUCCESS ? mmpi_impl_Wait(request, MPI_STATUS_IGNORE) : rc;
}

}  // namespace

extern "C" {

int mmpi_impl_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request* request) {
  Topology t;
  NeighbourLists l;
  if (int rc = enter_neighbours(comm, request, &t, &l)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;  // not defined for neighbourhoods
  if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (int rc = check_buf(recvcount, recvtype)) return rc;
  std::vector<Block> recvs, sends(l.out.size(), at(sendbuf, 0, sendcount, sendtype));
  for (std::size_t i = 0; i < l.in.size(); ++i)
    recvs.push_back(at(recvbuf, static_cast<MPI_Aint>(i) * recvcount, recvcount, recvtype));
  return exchange("MMPI_Ineighbor_allgather", t, l, recvs, sends, request);
}

int mmpi_impl_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Topology t;
  NeighbourLists l;
  if (int rc = enter_neighbours(comm, request, &t, &l)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (int rc = check_blocks(l.in.size(), recvcounts, displs, recvtype)) return rc;
  std::vector<Block> recvs, sends(l.out.size(), at(sendbuf, 0, sendcount, sendtype));
  for (std::size_t i = 0; i < l.in.size(); ++i)
    recvs.push_back(at(recvbuf, displs[i], recvcounts[i], recvtype));
  return exchange("MMPI_Ineighbor_allgatherv", t, l, recvs, sends, request);
}

int mmpi_impl_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Request* request) {
  Topology t;
  NeighbourLists l;
  if (int rc = enter_neighbours(comm, request, &t, &l)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (int rc = check_buf(recvcount, recvtype)) return rc;
  std::vector<Block> recvs, sends;
  for (std::size_t i = 0; i < l.in.size(); ++i)
    recvs.push_back(at(recvbuf, static_cast<MPI_Aint>(i) * recvcount, recvcount, recvtype));
  for (std::size_t i = 0; i < l.out.size(); ++i)
    sends.push_back(at(sendbuf, static_cast<MPI_Aint>(i) * sendcount, sendcount, sendtype));
  return exchange("MMPI_Ineighbor_alltoall", t, l, recvs, sends, request);
}

int mmpi_impl_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Request* request) {
  Topology t;
  NeighbourLists l;
  if (int rc = enter_neighbours(comm, request, &t, &l)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (int rc = check_blocks(l.out.size(), sendcounts, sdispls, sendtype)) return rc;
  if (int rc = check_blocks(l.in.size(), recvcounts, rdispls, recvtype)) return rc;
  std::vector<Block> recvs, sends;
  for (std::size_t i = 0; i < l.in.size(); ++i)
    recvs.push_back(at(recvbuf, rdispls[i], recvcounts[i], recvtype));
  for (std::size_t i = 0; i < l.out.size(); ++i)
    sends.push_back(at(sendbuf, sdispls[i], sendcounts[i], sendtype));
  return exchange("MMPI_Ineighbor_alltoallv", t, l, recvs, sends, request);
}

int mmpi_impl_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                  const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  MPI_Request* request) {
  Topology t;
  NeighbourLists l;
  if (int rc = enter_neighbours(comm, request, &t, &l)) return rc;
  if (sendbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if ((!l.out.empty() && (sendcounts == nullptr || sdispls == nullptr || sendtypes == nullptr)) ||
      (!l.in.empty() && (recvcounts == nullptr || rdispls == nullptr || recvtypes == nullptr)))
    return MPI_ERR_ARG;
  std::vector<Block> recvs, sends;
  for (std::size_t i = 0; i < l.in.size(); ++i) {
    if (int rc = check_buf(recvcounts[i], recvtypes[i])) return rc;
    recvs.push_back(at_byte(recvbuf, rdispls[i], recvcounts[i], recvtypes[i]));
  }
  for (std::size_t i = 0; i < l.out.size(); ++i) {
    if (int rc = check_buf(sendcounts[i], sendtypes[i])) return rc;
    sends.push_back(at_byte(sendbuf, sdispls[i], sendcounts[i], sendtypes[i]));
  }
  return exchange("MMPI_Ineighbor_alltoallw", t, l, recvs, sends, request);
}

int mmpi_impl_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  return wait(mmpi_impl_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm, &r),
              &r);
}

int mmpi_impl_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  return wait(mmpi_impl_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                             displs, recvtype, comm, &r),
              &r);
}

int mmpi_impl_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  return wait(mmpi_impl_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm, &r),
              &r);
}

int mmpi_impl_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  return wait(mmpi_impl_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                            recvcounts, rdispls, recvtype, comm, &r),
              &r);
}

int mmpi_impl_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  return wait(mmpi_impl_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                            recvcounts, rdispls, recvtypes, comm, &r),
              &r);
}

}  // extern "C"
