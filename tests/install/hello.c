/* Built against an installed libmmpi by every documented route
 * (tests/install/relocatable_install.py); run 1+1: each rank sends its rank
 * times 1000 + 7 to the other cluster and checks what comes back. */
#include <mmpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MMPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  const int peer = (rank + 1) % size, from = (rank + size - 1) % size;
  int out = rank * 1000 + 7, in = -1;
  MMPI_Sendrecv(&out, 1, MPI_INT, peer, 0, &in, 1, MPI_INT, from, 0, MMPI_COMM_WORLD,
                MPI_STATUS_IGNORE);
  if (in == from * 1000 + 7)
    printf("hello-c rank %d of %d got %d\n", rank, size, in);
  else
    printf("FAIL rank %d got %d\n", rank, in);
  MMPI_Finalize();
  return 0;
}
