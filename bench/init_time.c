/* init_time: when MPI_Init returned, for start-up benchmarks (bench/slurm_startup.py).
 *
 * Every rank prints "INIT <world rank> <CLOCK_REALTIME ns>" right after
 * MMPI_Init returns (the launcher's start time is taken by the driver on the
 * same host clock: all emulated nodes share it), then the ranks meet in a
 * barrier so that the run proves the world is whole. Built twice: against
 * libmmpi, and with -DMMPI_NATIVE against plain MPI (mmpi_native.h). */
#ifdef MMPI_NATIVE
#include "mmpi_native.h"
#else
#include <mmpi.h>
#endif
#include <stdio.h>
#include <time.h>

int main(int argc, char** argv) {
  if (MMPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int rank = 0, size = 0;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  printf("INIT %d %lld\n", rank, (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  fflush(stdout);
  MMPI_Barrier(MMPI_COMM_WORLD);
  if (rank == 0) printf("SIZE %d\n", size);
  MMPI_Finalize();
  return 0;
}
