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

/* Extension: the index-th algorithm (0, 1, ...) of `collective`, in the
 * library's table (the first is the fallback). Sets *name to its static,
 * NUL-terminated name and, when not NULL, *takes_senders / *takes_segment to
 * 1 if it takes n / a segment size, else 0. Callable before MMPI_Init.
 * Returns MPI_ERR_ARG for an unknown collective, index < 0 or index >= the
 * number of algorithms (the end of the list). */
int MMPIX_Coll_algorithm(const char* collective, int index, const char** name, int* takes_senders,
                         int* takes_segment);

/* Extension: fixes the segment size of `collective` from now on (bytes): the
 * pipelining algorithms send their inter-cluster step in segments of at most
 * that many bytes (docs/collectives.md). 0 = unsegmented (one message per
 * step, the default); -1 returns to the tuning file / environment / rules.
 * Independent of MMPIX_Coll_set (which drops a rule's own segment size, as it
 * replaces the rule); every rank must make the same call at the
 * same point. Returns MPI_ERR_ARG for an unknown collective or a size other
 * than -1, 0 or 1024 .. 2^40, MPI_ERR_OTHER before MMPI_Init. */
int MMPIX_Coll_set_segment(const char* collective, MPI_Aint segment_bytes);

/* Extension: what a call of `collective` with message size `bytes` (as the
 * rules see it, docs/collectives.md) on MMPI_COMM_WORLD would use now: the
 * algorithm's static name, n (clamped to 1..min(x, y)) and the segment size
 * in bytes (0 = unsegmented); NULL skips an output. Communicates nothing.
 * Returns MPI_ERR_ARG for an unknown collective or bytes < 0, MPI_ERR_OTHER
 * before MMPI_Init. */
int MMPIX_Coll_choice(const char* collective, MPI_Aint bytes, const char** algorithm,
                      int* inter_senders, MPI_Aint* segment_bytes);

/* Extension: the job's layout as libmmpi read it at MMPI_Init: x ranks in
 * the low cluster (world ranks 0..x-1, unless zipper-run --rank-map placed
 * them otherwise: docs/placement.md), y in the high one (x..x+y-1) and the
 * number of bridge nodes (forwarders) a rank reaches the other cluster
 * through. Standalone (no MMPI_FORWARDER): x = the world's size, y = 0 and
 * no forwarders. (The two-site view of the job's sites, docs/sites.md: x is
 * the first site's ranks, y every other site's.) NULL skips an output.
 * Returns MPI_ERR_OTHER before MMPI_Init. */
int MMPIX_Layout(int* ranks_low, int* ranks_high, int* forwarders);

/* Extension (one-sided tests and diagnostics): the private communicator on
 * which window `win` carries its one-sided traffic (docs/rma.md), and how
 * many request messages this process refused on it as malformed or hostile
 * since the window was created. Returns MPI_ERR_WIN for an unknown window. */
int MMPIX_Win_comm(MPI_Win win, MPI_Comm* comm);
int MMPIX_Win_refused(MPI_Win win, MPI_Count* refused);

/* User reduction operations (MPI_User_function). They run only inside the
 * application's processes, never in zipperd. */
int MMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op);
int MMPI_Op_free(MPI_Op* op);

/* ---- vector collectives, scans (capi/collectives_v.cpp) ----------------
 * MPI's signatures and semantics on MMPI_COMM_WORLD: any root, zero counts,
 * MPI_IN_PLACE where MPI allows it. Counts and displacements are in
 * elements of the datatype (Alltoallw: displacements in bytes). Errors
 * before any communication: MPI_ERR_COMM (not an MMPI communicator),
 * MPI_ERR_COUNT (a negative count, or a missing counts array),
 * MPI_ERR_TYPE, MPI_ERR_OP (MPI_OP_NULL), MPI_ERR_ROOT, MPI_ERR_ARG (a
 * missing displacement or datatype array), MPI_ERR_BUFFER (MPI_IN_PLACE
 * where MPI forbids it). A failure after communication began aborts the job.
 * Reductions and scans combine in rank order, so non-commutative
 * operations (MMPI_Op_create with commute = 0) are exact. Algorithms
 * (docs/collectives.md):
 *   Gatherv, Scatterv, Allgatherv: two-level, one packed inter-cluster
 *     message per cluster (MagPIe, Kielmann et al. 1999 §3);
 *   Reduce_scatter: rank-order reduction at both leaders, native scatter;
 *   Scan, Exscan: native scan per cluster plus one carry between them where
 *     each cluster's ranks are consecutive; otherwise (or with
 *     MMPI_SCAN_ALGORITHM=runs) the leaders fold the clusters' runs of
 *     consecutive ranks in rank order (two-level scan, Sanders & Traeff 2006
 *     §2). Exscan leaves rank 0's recvbuf untouched (MMPI_Init refuses an
 *     unknown MMPI_SCAN_ALGORITHM);
 *   Alltoallw: direct exchange (Thakur et al. 2005 §4.6). */
int MMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm);
int MMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm);
int MMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm);
int MMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm);
int MMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm);
int MMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
/* ---- end vector collectives, scans -------------------------------------- */

/* ---- non-blocking collectives (capi/nbc.cpp) ----------------------------
 * MPI's signatures and semantics; arguments and errors as for the blocking
 * collectives above, plus MPI_ERR_REQUEST for a null request pointer. The
 * returned request completes through MMPI_Wait/Test and their variants;
 * while any is outstanding, every MMPI call that progresses (waits, tests,
 * blocking calls) advances it. Every rank must start the non-blocking
 * collectives of a communicator in the same order (MPI-3.1 §5.12); any
 * number may be outstanding at once, mixed with blocking collectives and
 * point-to-point. Buffers, and the datatypes' contents, must not be touched
 * until completion; a user operation (MMPI_Op_create) must not be freed
 * before completion. Each is a schedule of point-to-point rounds
 * (libNBC, Hoefler et al. SC07 §3), correct for any layout:
 *   Ibarrier: dissemination (Hensgen et al. 1988);
 *   Ibcast: root -> far cluster's member 0, then a binomial tree per cluster;
 *   Ireduce: binomial tree in rank order to rank 0 (non-commutative safe),
 *     then to the root; Iallreduce: Ireduce to 0 + Ibcast from 0;
 *   Ireduce_scatter(_block): Ireduce to 0 + direct scatter;
 *   Iscan, Iexscan: recursive doubling (Hillis & Steele 1986), Iexscan
 *     leaves rank 0's recvbuf untouched;
 *   Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v, w): direct exchange. */
int MMPI_Ibarrier(MPI_Comm comm, MPI_Request* request);
int MMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request);
int MMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request);
int MMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request);
int MMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
int MMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request);
int MMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request);
int MMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request);
int MMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request);
int MMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request);
int MMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request);
int MMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
int MMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request);
int MMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request);
int MMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request);
int MMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request);
int MMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request);
/* ---- end non-blocking collectives --------------------------------------- */

/* ---- ready, buffered and persistent sends; completion of several requests
 *      (capi/p2p_more.cpp, bsend.cpp,
 * persistent.cpp) ------------------------------------------------------------
 * MPI's signatures and semantics on MMPI_COMM_WORLD; errors as for
 * MMPI_Send/Recv (MPI_ERR_COMM, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_RANK,
 * MPI_ERR_TAG), plus:
 *   Rsend, Irsend: standard-mode sends (correct whenever a ready send is).
 *   Bsend, Ibsend: the message is packed into the buffer attached with
 *     MMPI_Buffer_attach, using its packed size (MPI_Pack_size) plus
 *     MPI_BSEND_OVERHEAD bytes until its send completes; returns
 *     MPI_ERR_BUFFER, sending nothing, if no buffer is attached or the
 *     message does not fit. Ibsend's request is complete at once.
 *   Buffer_attach: MPI_ERR_BUFFER if one is attached already, MPI_ERR_ARG
 *     for size < 0. Buffer_detach waits until every buffered message has
 *     been sent (or failed with its peer); with none attached it returns
 *     NULL and size 0. Messages still buffered at MMPI_Finalize are lost:
 *     detach first.
 *   Send_init, Bsend_init, Rsend_init, Recv_init, Start, Startall:
 *     persistent requests; Wait/Test leave them allocated and inactive (a
 *     wait on an inactive one returns at once with an empty status) until
 *     MMPI_Request_free. Start on an active one returns MPI_ERR_REQUEST.
 *   Testany, Testsome, Waitsome (and MMPI_Waitany): MPI semantics; null
 *     and inactive requests are skipped (index/outcount MPI_UNDEFINED when
 *     none is active).
 *   Request_get_status: completion test without freeing.
 *   Request_free: MPI_ERR_REQUEST for MPI_REQUEST_NULL and for a
 *     non-blocking collective's request (MPI-3.1 §5.12); an active
 *     point-to-point or persistent request completes in the background and
 *     is freed then.
 *   Sendrecv_replace: through a scratch copy of the buffer. */
int MMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request);
int MMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request);
int MMPI_Buffer_attach(void* buffer, int size);
int MMPI_Buffer_detach(void* buffer_addr, int* size);
int MMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request);
int MMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request);
int MMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request);
int MMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request);
int MMPI_Start(MPI_Request* request);
int MMPI_Startall(int count, MPI_Request requests[]);
int MMPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int MMPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                  MPI_Status statuses[]);
int MMPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                  MPI_Status statuses[]);
int MMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status);
int MMPI_Request_free(MPI_Request* request);
int MMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status);
/* ---- end ready, buffered and persistent sends; completion --------------- */

#ifdef __cplusplus
}
#endif

/* Every other MPI-3.1 function's MMPI_ twin (pass-through or unsupported,
 * generated at build time; status per function: docs/api-coverage.md). */
#include "mmpi_generated.h"

#endif /* MMPI_H */
