/* Per-call cost of the transparent layer (target: <= 50 ns):
 * MPI_Comm_rank on MPI_COMM_WORLD, 10^7 times (argv[1] overrides), timed with
 * MPI_Wtime. Built twice: transparent_call_cost (unmodified, plain mpicc; run
 * with LD_PRELOAD=libmmpi_transparent.so, or via zipper-run --transparent) and
 * transparent_call_cost_ported (-DPORTED: MMPI_Comm_rank, linked with
 * libmmpi). Each rank prints "comm_rank <calls> calls <ns> ns/call rank <r>".
 * Run both side by side in one job layout (docs/transparent.md). */
#include <stdio.h>
#include <stdlib.h>
#ifdef PORTED
#include <mmpi.h>
#define RANK(c, r) MMPI_Comm_rank(c, r)
#define WORLD MMPI_COMM_WORLD
#define INIT MMPI_Init
#define FINALIZE MMPI_Finalize
#define WTIME MMPI_Wtime
#else
#include <mpi.h>
#define RANK(c, r) MPI_Comm_rank(c, r)
#define WORLD MPI_COMM_WORLD
#define INIT MPI_Init
#define FINALIZE MPI_Finalize
#define WTIME MPI_Wtime
#endif

int main(int argc, char** argv) {
  if (INIT(&argc, &argv) != MPI_SUCCESS) return 1;
  const long calls = argc > 1 ? atol(argv[1]) : 10000000L;
  int rank = -1, sum = 0;
  RANK(WORLD, &rank);
  const double t0 = WTIME();
  for (long i = 0; i < calls; ++i) {
    int r;
    RANK(WORLD, &r);
    sum += r; /* keeps the call from being dropped */
  }
  const double t = WTIME() - t0;
  if (sum != (int)(calls * rank)) fprintf(stderr, "comm_rank: rank changed during the loop\n");
  printf("comm_rank %ld calls %.1f ns/call rank %d\n", calls, calls > 0 ? t * 1e9 / calls : 0.0,
         rank);
  FINALIZE();
  return 0;
}
