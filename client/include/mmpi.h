/* mmpi.h — libmmpi, MPI across two clusters joined by zipperd.
 *
 * Port an MPI program by prefixing every call with M (MPI_Send -> MMPI_Send)
 * and the world communicator (MPI_COMM_WORLD -> MMPI_COMM_WORLD). Signatures,
 * datatypes, statuses, error codes and constants are MPI's own (from <mpi.h>).
 *
 * Ranks are virtual ranks: the low group (cluster launched with
 * MMPI_GROUP=low) holds 0..x-1, the high group x..x+y-1. Traffic between two
 * ranks of one cluster goes straight to Open MPI; traffic between clusters
 * goes through zipperd.
 *
 * Thread level: at most MPI_THREAD_SERIALIZED is provided.
 * Only MMPI_COMM_WORLD is supported as a communicator in this release; any
 * other communicator returns MPI_ERR_COMM.
 */
#ifndef MMPI_H
#define MMPI_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The world communicator spanning both clusters. MPI_COMM_NULL before
 * MMPI_Init; afterwards a handle the library recognises (a duplicate of the
 * local cluster's MPI_COMM_WORLD). */
extern MPI_Comm mmpi_comm_world;
#define MMPI_COMM_WORLD mmpi_comm_world

int MMPI_Init(int* argc, char*** argv);
int MMPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MMPI_Initialized(int* flag);
int MMPI_Finalize(void);
int MMPI_Abort(MPI_Comm comm, int errorcode);

int MMPI_Comm_rank(MPI_Comm comm, int* rank);
int MMPI_Comm_size(MPI_Comm comm, int* size);

int MMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status);
int MMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request);
int MMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request);
int MMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status);

int MMPI_Wait(MPI_Request* request, MPI_Status* status);
int MMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int MMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
int MMPI_Test(MPI_Request* request, int* flag, MPI_Status* status);
int MMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);

int MMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int MMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int MMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count);

double MMPI_Wtime(void);

/* Collectives on MMPI_COMM_WORLD, with MPI's signatures and semantics (any
 * root, MPI_IN_PLACE where MPI allows it, zero counts). Intra-cluster steps
 * run as native Open MPI collectives; inter-cluster steps go through zipperd.
 * The algorithm and the number n of concurrent inter-cluster senders are
 * chosen per call by size and layout; override with MMPI_<OP>_ALGORITHM,
 * MMPI_INTER_SENDERS or a tuning file (MMPI_TUNING_FILE, see
 * docs/collectives.md). Every rank must pass the same algorithm-relevant
 * arguments (count, datatype, op, root), as MPI requires.
 * Reductions accept predefined datatypes and operations (pair types with
 * MPI_MAXLOC/MPI_MINLOC) and operations from MMPI_Op_create. */
int MMPI_Barrier(MPI_Comm comm);
int MMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm);
int MMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm);
int MMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/* Extension (not in MPI): fixes the algorithm and the number of concurrent
 * inter-cluster senders n for one collective from now on, overriding the
 * environment, the tuning file and the default rule. `collective` is one of
 * "barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv",
 * "gather", "scatter", "allgather", "reduce_scatter_block"; `algorithm` one of
 * the names in docs/collectives.md, or NULL / "" to return to automatic
 * selection; `inter_senders` = n (clamped to 1..min(x, y)), or 0 for the
 * rule's choice. Every rank must make the same call at the same point.
 * Returns MPI_ERR_ARG for an unknown collective or algorithm. */
int MMPIX_Coll_set(const char* collective, const char* algorithm, int inter_senders);

/* User reduction operations (MPI_User_function). They run only inside the
 * application's processes, never in zipperd. */
int MMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op);
int MMPI_Op_free(MPI_Op* op);

#ifdef __cplusplus
}
#endif

/* Every other MPI-3.1 function's MMPI_ twin (pass-through or unsupported,
 * generated at build time; status per function: docs/api-coverage.md). */
#include "mmpi_generated.h"

#endif /* MMPI_H */
