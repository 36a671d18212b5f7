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

int MMPI_Init(int *argc, char ***argv);
int MMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MMPI_Initialized(int *flag);
int MMPI_Finalize(void);
int MMPI_Abort(MPI_Comm comm, int errorcode);

int MMPI_Comm_rank(MPI_Comm comm, int *rank);
int MMPI_Comm_size(MPI_Comm comm, int *size);

int MMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status);
int MMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request);
int MMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status);

int MMPI_Wait(MPI_Request *request, MPI_Status *status);
int MMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int MMPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int MMPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MMPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);

int MMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int MMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);

double MMPI_Wtime(void);

#ifdef __cplusplus
}
#endif

#endif /* MMPI_H */
