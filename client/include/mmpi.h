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
 *
 * Communicators: MMPI_COMM_WORLD, MMPI_COMM_SELF and every communicator made
 * from them (dup, split, split_type, create, Cartesian). Ranks passed to and
 * returned by every call are ranks of the communicator given. A communicator
 * handle is the communicator's own native Open MPI communicator over its
 * members in the calling process's cluster; passing a handle libmmpi did not
 * make (other than MPI_COMM_SELF) returns MPI_ERR_COMM. Communicators whose
 * members all lie in one cluster run entirely on Open MPI. Inter-communicators
 * are not offered (MMPI_Comm_test_inter always answers false).
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
/* The communicator holding only the calling process: Open MPI's own handle,
 * so native MPI_COMM_SELF is accepted as the same. */
#define MMPI_COMM_SELF MPI_COMM_SELF

int MMPI_Init(int* argc, char*** argv);
int MMPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MMPI_Initialized(int* flag);
int MMPI_Finalize(void);
int MMPI_Abort(MPI_Comm comm, int errorcode);

/* Rank of the caller in `comm` (0..size-1) and the number of members.
 * MPI_ERR_COMM for an unknown handle, MPI_ERR_OTHER before MMPI_Init. */
int MMPI_Comm_rank(MPI_Comm comm, int* rank);
int MMPI_Comm_size(MPI_Comm comm, int* size);

/* Communicator constructors: collective over `comm` (every member calls).
 * The new communicator gets a context id agreed over `comm`, so its traffic
 * never matches another communicator's, also across clusters. Each costs an
 * allgather of 2 ints and an allreduce of 1 over `comm`, plus Open MPI's
 * split of the local members. Members that get no communicator receive
 * MPI_COMM_NULL. Errors: MPI_ERR_COMM (unknown comm), MPI_ERR_ARG (negative
 * colour other than MPI_UNDEFINED; split type other than
 * MPI_COMM_TYPE_SHARED), MPI_ERR_GROUP (group not a subgroup of comm's). */
int MMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
int MMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
/* MPI_COMM_TYPE_SHARED: the members on the caller's node (a node lies in one
 * cluster, so the result runs on Open MPI alone). */
int MMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm);
int MMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
/* Collective over the members of `group` only (a subgroup of comm's, the
 * caller among them); `tag` tells concurrent calls apart as in MPI.
 * MPI_ERR_GROUP when the caller is not in `group`, MPI_ERR_TAG for tag < 0. */
int MMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm);
/* Frees a communicator made by a constructor and sets *comm to
 * MPI_COMM_NULL; operations still running on it complete normally.
 * MPI_ERR_COMM for MMPI_COMM_WORLD, MMPI_COMM_SELF or an unknown handle. */
int MMPI_Comm_free(MPI_Comm* comm);
/* MPI_IDENT (same handle), MPI_CONGRUENT (same members, same order),
 * MPI_SIMILAR (same members) or MPI_UNEQUAL. */
int MMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result);
/* A new group of comm's members (free it with MMPI_Group_free). */
int MMPI_Comm_group(MPI_Comm comm, MPI_Group* group);
/* Names are local to the process, at most MPI_MAX_OBJECT_NAME-1 characters. */
int MMPI_Comm_set_name(MPI_Comm comm, const char* comm_name);
int MMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen);
/* MPI_WTIME_IS_GLOBAL: false (the clusters' clocks are independent);
 * MPI_UNIVERSE_SIZE: the job's world size; MPI_TAG_UB, MPI_HOST, MPI_IO,
 * MPI_APPNUM and user keyvals: Open MPI's values. */
int MMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag);
int MMPI_Comm_test_inter(MPI_Comm comm, int* flag);

/* Groups: ordered sets of processes (MPI-3.1 §6.3), local to the caller.
 * Group handles come from MMPI_Comm_group and the functions below; native
 * MPI_GROUP_EMPTY is the empty group. MPI_ERR_GROUP for an unknown handle,
 * MPI_ERR_RANK for a rank out of range or named twice (or a zero stride). */
int MMPI_Group_size(MPI_Group group, int* size);
int MMPI_Group_rank(MPI_Group group, int* rank);
int MMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup);
int MMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup);
int MMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup);
int MMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup);
int MMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup);
int MMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup);
int MMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup);
int MMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]);
int MMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result);
int MMPI_Group_free(MPI_Group* group);

/* Cartesian topologies (MPI-3.1 §7.5) over any communicator; reorder is
 * ignored (grid rank i = rank i of comm_old). MPI_ERR_DIMS when the grid is
 * larger than the communicator or a dimension is not positive,
 * MPI_ERR_TOPOLOGY for a communicator without a Cartesian topology,
 * MPI_ERR_ARG for coordinates out of range in a non-periodic dimension. */
int MMPI_Dims_create(int nnodes, int ndims, int dims[]);
int MMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm* comm_cart);
int MMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank);
int MMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest);
int MMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm);
int MMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int MMPI_Cartdim_get(MPI_Comm comm, int* ndims);
int MMPI_Topo_test(MPI_Comm comm, int* status);

int MMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status);
int MMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request);
int MMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request);
/* Synchronous send: completes only once the receiver matched it (across
 * clusters it always takes the rendezvous). */
int MMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
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
/* Matched probe: the message leaves matching and only MMPI_Mrecv/Imrecv can
 * receive it. A probe of MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. */
int MMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status);
int MMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
int MMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status);
int MMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request);
/* Cancels a receive not yet matched (its status then tests cancelled). Sends
 * are not cancelled, as MPI allows: they complete normally. The request must
 * still be completed with a wait or test. MPI_ERR_REQUEST for a null request. */
int MMPI_Cancel(MPI_Request* request);
int MMPI_Test_cancelled(const MPI_Status* status, int* flag);

double MMPI_Wtime(void);

/* Collectives on any communicator, with MPI's signatures and semantics (any
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

#endif /* MMPI_H */
