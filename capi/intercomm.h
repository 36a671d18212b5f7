// Inter-communicators (MPI-3.1 §6.6) in the C API: building them (from
// Intercomm_create, Comm_dup, Comm_split, Comm_create), and the collectives
// on them with §5.2.2's semantics (capi/intercomm_coll.cpp). See
// client/intercomm.h for the representation.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "../client/communicator.h"
#include "../client/runtime.h"

namespace zipper::capi {

/// True when `comm` is a live MMPI inter-communicator.
bool is_intercomm(MPI_Comm comm);

/// Builds the inter-communicator between `local` and `remote` (world ranks,
/// in group rank order; disjoint; the caller in `local`). Collective over
/// both groups, each member calling with its own group as `local`; `tag`
/// separates it from other creations in flight (Open MPI's
/// MPI_Comm_create_group and MPI_Intercomm_create on the native parts).
/// `parent` lends its error handler.
int make_intercomm(client::Runtime& rt, const client::Comm& parent, const std::vector<int>& local,
                   const std::vector<int>& remote, int tag, std::shared_ptr<client::Comm>* out);

/// Comm_split and Comm_create of an inter-communicator (each collective over
/// both groups; its Comm_dup goes through capi/comm_idup.cpp). *out is null
/// where MPI gives MPI_COMM_NULL.
int inter_split(client::Runtime& rt, const client::CommPtr& c, int color, int key,
                std::shared_ptr<client::Comm>* out);
int inter_create(client::Runtime& rt, const client::CommPtr& c, const std::vector<int>& group,
                 std::shared_ptr<client::Comm>* out);
/// Unregisters an inter-communicator and its hidden merged communicator.
void inter_free(client::Runtime& rt, const client::Comm& c);

/// Non-blocking collectives on an inter-communicator (MPI-3.1 §5.2.2:
/// MPI_ROOT / MPI_PROC_NULL roots, results from the remote group). The
/// blocking forms are these plus a wait (`inter_wait`). Gather and scatter:
/// inter_irooted (capi/coll_table.h).
int inter_wait(int rc, MPI_Request* request);
int inter_ibarrier(MPI_Comm comm, MPI_Request* request);
int inter_ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                 MPI_Request* request);
int inter_ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request* request);
int inter_iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm, MPI_Request* request);
int inter_iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
int inter_ialltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     MPI_Request* request);
/// Alltoallw with MPI_Alltoallw's int byte displacements.
int inter_ialltoallw_int(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                         MPI_Request* request);
/// Alltoall(v) in alltoallw's terms (element displacements scaled to bytes).
int inter_ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request);
int inter_ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
/// Reduce_scatter: recvcounts of the local group (null with `block` > = 0:
/// Reduce_scatter_block with `block` elements each).
int inter_ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], int block,
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request);

}  // namespace zipper::capi
