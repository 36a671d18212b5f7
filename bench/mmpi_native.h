/* mmpi_native.h — build the zipper benchmarks against plain MPI.
 *
 * The benchmark sources include this header instead of <mmpi.h> when compiled
 * with -DMMPI_NATIVE. Every MMPI_ entry point of mmpi.h maps 1:1 onto its MPI
 * counterpart, so one source gives both the libmmpi and the native binary and
 * the two measure exactly the same code path apart from the library.
 */
#ifndef MMPI_NATIVE_H
#define MMPI_NATIVE_H

#include <mpi.h>

#define MMPI_VARIANT "native MPI"

#define MMPI_COMM_WORLD MPI_COMM_WORLD

#define MMPI_Init MPI_Init
#define MMPI_Init_thread MPI_Init_thread
#define MMPI_Initialized MPI_Initialized
#define MMPI_Finalize MPI_Finalize
#define MMPI_Abort MPI_Abort

#define MMPI_Comm_rank MPI_Comm_rank
#define MMPI_Comm_size MPI_Comm_size

#define MMPI_Send MPI_Send
#define MMPI_Recv MPI_Recv
#define MMPI_Isend MPI_Isend
#define MMPI_Irecv MPI_Irecv
#define MMPI_Sendrecv MPI_Sendrecv

#define MMPI_Wait MPI_Wait
#define MMPI_Waitall MPI_Waitall
#define MMPI_Waitany MPI_Waitany
#define MMPI_Test MPI_Test
#define MMPI_Testall MPI_Testall

#define MMPI_Probe MPI_Probe
#define MMPI_Iprobe MPI_Iprobe
#define MMPI_Get_count MPI_Get_count

#define MMPI_Wtime MPI_Wtime

#define MMPI_Barrier MPI_Barrier
#define MMPI_Bcast MPI_Bcast
#define MMPI_Reduce MPI_Reduce
#define MMPI_Allreduce MPI_Allreduce
#define MMPI_Alltoall MPI_Alltoall
#define MMPI_Alltoallv MPI_Alltoallv
#define MMPI_Gather MPI_Gather
#define MMPI_Scatter MPI_Scatter
#define MMPI_Allgather MPI_Allgather
#define MMPI_Reduce_scatter_block MPI_Reduce_scatter_block

#define MMPI_Op_create MPI_Op_create
#define MMPI_Op_free MPI_Op_free

/* Extension of libmmpi with no MPI counterpart: selecting the algorithm of a
 * collective is a no-op on plain MPI (Open MPI picks its own). Evaluates its
 * arguments once and yields MPI_SUCCESS. */
#define MMPIX_Coll_set(collective, algorithm, inter_senders) \
  ((void)(collective), (void)(algorithm), (void)(inter_senders), MPI_SUCCESS)

#endif /* MMPI_NATIVE_H */
