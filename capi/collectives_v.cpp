// C entry points of the vector collectives (MPI-3.1 5.5-5.8, 5.10): gatherv,
// scatterv, allgatherv, reduce_scatter and alltoallw (mmpi.h); scan and
// exscan are in scan.cpp. As in
// capi/collectives.cpp, arguments are checked before anything is
// communicated, and a failure after communication began aborts the job.
// Each has one algorithm (no selection): see the headers in collectives/.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../collectives/allgatherv_two_level.h"
#include "../collectives/alltoallw_direct.h"
#include "../collectives/alltoallw_in_place.h"
#include "../collectives/reduce_scatter_leaders.h"
#include "../collectives/rooted_v_two_level.h"
#include "coll_checks.h"
#include "coll_table.h"
#include "intercomm.h"
#include "many_sites.h"

using namespace zipper::capi;
using zipper::coll::Topology;

// Gatherv and Scatterv on an intra-communicator.
int zipper::capi::intra_rooted_v(const Rooted& a, int root, MPI_Comm comm) {
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t)) return run_schedule(intra_irooted_v, a, root, comm);
  if (int rc = check_rooted_v(t, root, a)) return rc;
  return finish_named(a.to_root() ? "MMPI_Gatherv" : "MMPI_Scatterv", "rooted_v_two_level", t,
                      zipper::coll::rooted_v_two_level(
                          a.dir, t, const_cast<void*>(a.own), a.own_count, a.own_type,
                          const_cast<void*>(a.all), a.counts, a.displs, a.all_type, root));
}

extern "C" {

int mmpi_impl_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm) {
  return collectives_of(comm).rooted_v(
      Rooted::gather(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype), root,
      comm);
}

int mmpi_impl_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm) {
  return collectives_of(comm).rooted_v(
      Rooted::scatter(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype), root,
      comm);
}

int mmpi_impl_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        0, recvtype, comm, &r_),
                      &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Iallgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                        displs, recvtype, comm);
  if (sendbuf != MPI_IN_PLACE)
    if (int rc = check_buf(sendcount, sendtype)) return rc;
  if (int rc = check_bufs(t.size, recvcounts, recvtype)) return rc;
  if (displs == nullptr) return MPI_ERR_ARG;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  return finish_named("MMPI_Allgatherv", "allgatherv_two_level", t,
                      zipper::coll::allgatherv_two_level(t, sendbuf, sendcount, sendtype, recvbuf,
                                                         recvcounts, displs, recvtype));
}

int mmpi_impl_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(
        inter_ireduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, &r_), &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ireduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op,
                        comm);
  if (int rc = check_bufs(t.size, recvcounts, datatype)) return rc;
  if (int rc = check_op(op)) return rc;
  if (recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  // In place: recvbuf holds the whole input vector; it is read (native
  // reduce or gather) before the final scatter overwrites it.
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  return finish_named(
      "MMPI_Reduce_scatter", "reduce_scatter_leaders", t,
      zipper::coll::reduce_scatter_leaders(t, in, recvbuf, recvcounts, datatype, op));
}

int mmpi_impl_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (is_intercomm(comm)) {  // MPI-3.1 §5.2.2 (capi/intercomm_coll.cpp)
    MPI_Request r_ = MPI_REQUEST_NULL;
    return inter_wait(inter_ialltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, comm, &r_),
                      &r_);
  }
  Topology t;
  if (int rc = enter(comm, &t)) return rc;
  if (beyond_two_sites(t))
    return run_schedule(mmpi_impl_Ialltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                        recvcounts, rdispls, recvtypes, comm);
  if (int rc = check_alltoallw(t, sendbuf, sendcounts, sdispls, sendtypes, recvcounts, rdispls,
                               recvtypes))
    return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place)
    return finish_named(
        "MMPI_Alltoallw", "alltoallw_in_place", t,
        zipper::coll::alltoallw_in_place(t, recvbuf, recvcounts, rdispls, recvtypes));
  return finish_named("MMPI_Alltoallw", "alltoallw_direct", t,
                      zipper::coll::alltoallw_direct(t, sendbuf, sendcounts, sdispls, sendtypes,
                                                     recvbuf, recvcounts, rdispls, recvtypes));
}

}  // extern "C"
