/* MPI_Abort in one cluster ends the whole job (tests/errors/abort_itest.py):
 *   mmpi_abort_itest low|high CODE
 * Every rank passes one MMPI_Barrier (the job runs across both clusters);
 * then the last rank of the low (low) or high (high) group prints
 * "ABORT_AT <seconds since the epoch>" and calls MMPI_Abort(MMPI_COMM_WORLD,
 * CODE), while every other rank waits in a second MMPI_Barrier that cannot
 * complete. The job must end by the abort, with CODE, long before any
 * timeout; a rank that returns from the barrier prints FAIL. */
#include <mmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  if (argc != 3 || (strcmp(argv[1], "low") != 0 && strcmp(argv[1], "high") != 0)) {
    fprintf(stderr, "usage: mmpi_abort_itest low|high CODE\n");
    return 2;
  }
  const int code = atoi(argv[2]);
  if (MMPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rank = -1, size = 0;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  const char* np_low = getenv("MMPI_NP_LOW");
  const int nlow = np_low ? atoi(np_low) : size / 2;
  const int aborter = strcmp(argv[1], "low") == 0 ? nlow - 1 : size - 1;
  if (MMPI_Barrier(MMPI_COMM_WORLD) != MPI_SUCCESS) {
    fprintf(stderr, "FAIL rank %d: first barrier\n", rank);
    return 1;
  }
  if (rank == aborter) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    printf("ABORT_AT %.6f rank %d code %d\n", (double)t.tv_sec + 1e-9 * (double)t.tv_nsec, rank,
           code);
    fflush(stdout);
    MMPI_Abort(MMPI_COMM_WORLD, code);
    fprintf(stderr, "FAIL rank %d: MMPI_Abort returned\n", rank);
    return 1;
  }
  MMPI_Barrier(MMPI_COMM_WORLD);
  fprintf(stderr, "FAIL rank %d: the second barrier completed without rank %d\n", rank, aborter);
  MMPI_Finalize();
  return 1;
}
