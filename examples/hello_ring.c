/* hello_ring: the smallest MMPI program worth running. Every rank reports
 * where it runs, then a token travels once around the ring of virtual ranks
 * 0..x+y-1, crossing between the clusters through zipperd twice, and each
 * rank adds its rank to it. Rank 0 checks the sum. Build with
 *   mpicc hello_ring.c $(pkg-config --cflags --libs mmpi)
 * and run with
 *   zipper-run -x 2 -y 2 -- ./hello_ring                                  */
#include <mmpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MMPI_Init(&argc, &argv);
  int rank, size;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  char host[64] = "?";
  gethostname(host, sizeof host);
  printf("rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);

  long token = 0;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  double t0 = MMPI_Wtime();
  if (rank == 0) {
    MMPI_Send(&token, 1, MPI_LONG, next, 0, MMPI_COMM_WORLD);
    MMPI_Recv(&token, 1, MPI_LONG, prev, 0, MMPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const long expect = (long)size * (size - 1) / 2;
    printf("token came back with %ld (expected %ld) after %.1f us: %s\n", token, expect,
           (MMPI_Wtime() - t0) * 1e6, token == expect ? "OK" : "WRONG");
    MMPI_Finalize();
    return token == expect ? 0 : 1;
  }
  MMPI_Recv(&token, 1, MPI_LONG, prev, 0, MMPI_COMM_WORLD, MPI_STATUS_IGNORE);
  token += rank;
  MMPI_Send(&token, 1, MPI_LONG, next, 0, MMPI_COMM_WORLD);
  MMPI_Finalize();
  return 0;
}
