/* An unmodified MPI-4.0 program on MPICH through libmmpi_transparent-mpich
 * (mpich_local.py): libmmpi offers MPI-3.1, so MPI_Isendrecv and
 * MPI_Send_c must be refused with MPI_ERR_UNSUPPORTED_OPERATION on the
 * zipper world (here with MPI_ERRORS_RETURN) instead of running on MPICH's
 * own world of one cluster. Prints "PASS refused" at every rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int out = rank, in = -1;
  MPI_Request req = MPI_REQUEST_NULL;
  const int peer = (rank + 1) % size;
  const int a = MPI_Isendrecv(&out, 1, MPI_INT, peer, 0, &in, 1, MPI_INT, MPI_ANY_SOURCE, 0,
                              MPI_COMM_WORLD, &req);
  const int b = MPI_Send_c(&out, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
  int ok = a == MPI_ERR_UNSUPPORTED_OPERATION && b == MPI_ERR_UNSUPPORTED_OPERATION &&
           req == MPI_REQUEST_NULL && in == -1;
  /* The world still works after the refusals: every rank's verdict. */
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!ok)
    printf("FAIL rank %d: MPI_Isendrecv %d, MPI_Send_c %d (want %d)\n", rank, a, b,
           MPI_ERR_UNSUPPORTED_OPERATION);
  if (rank == 0 && all && size >= 2) printf("PASS refused (%d ranks)\n", size);
  MPI_Finalize();
  return all ? 0 : 1;
}
