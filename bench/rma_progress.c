/* rma_progress — passive-target progress: how long an 8-byte
 * MPI_Get takes from a target that computes without any MPI call, against
 * the same Get from a target that waits inside MPI (idle).
 *
 * Rank 0 (origin) locks rank 1's window (shared), then per phase issues up
 * to -n MPI_Get + MPI_Win_flush of 8 bytes, timing each, and checks every
 * value. Rank 1 (target) either waits in MPI_Barrier ("idle") or spins for
 * -t seconds on arithmetic, reading only clock_gettime ("busy"), then joins
 * the barrier. In the busy phase the origin stops issuing once 80 % of -t
 * has passed, so every timed Get starts while the target computes. Phases
 * alternate, -r rounds. Plain MPI (mpicc); run with exactly 2 processes.
 *
 * Output, one line per phase and round, and the ratio over all rounds:
 *   phase busy round 0 gets 812 mean_us 123.4 median_us 120.1 max_us 410.2
 *   ratio busy/idle median 1.02 (idle median_us 118.0, busy median_us 120.4)
 * Exit 3 when a Get returns a wrong value. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GETS 100000

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static volatile double sink;

/* Computes for `seconds` with no MPI call at all. */
static void compute(double seconds) {
  double end = now() + seconds, x = 1.0;
  long k = 0;
  while (now() < end)
    for (k = 0; k < 20000; k++) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

int main(int argc, char** argv) {
  int rank, size, i, r, rounds = 3, max_gets = 200;
  double seconds = 2.0, *lat, med[2] = {0, 0};
  int64_t *base, expect = 0x5a5a123456789LL, got;
  double all_med[2][64];
  MPI_Win win;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-t"))
      seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n"))
      max_gets = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-r"))
      rounds = atoi(argv[i + 1]);
    else
      break;
  }
  if (size != 2 || i < argc || seconds <= 0 || max_gets < 1 || max_gets > MAX_GETS || rounds < 1 ||
      rounds > 64) {
    if (rank == 0)
      fprintf(stderr,
              "usage: rma_progress [-t SECONDS>0] [-n GETS 1..%d] [-r ROUNDS 1..64] "
              "(exactly 2 processes)\n",
              MAX_GETS);
    MPI_Finalize();
    return 1;
  }
  lat = malloc(sizeof(double) * (size_t)max_gets);
  MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  *base = rank == 1 ? expect : 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);

  for (r = 0; r < rounds; r++)
    for (i = 0; i < 2; i++) { /* 0 idle, 1 busy */
      int busy = i, n = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) {
        if (busy) compute(seconds);
      } else {
        double start = now();
        while (n < max_gets && (!busy || now() - start < 0.8 * seconds)) {
          double t0 = now();
          got = -1;
          MPI_Get(&got, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
          MPI_Win_flush(1, win);
          lat[n++] = (now() - t0) * 1e6;
          if (got != expect) {
            fprintf(stderr, "rma_progress: Get returned %lld, expected %lld\n", (long long)got,
                    (long long)expect);
            MPI_Abort(MPI_COMM_WORLD, 3);
          }
        }
        {
          double sum = 0, mx = 0;
          int k;
          for (k = 0; k < n; k++) {
            sum += lat[k];
            if (lat[k] > mx) mx = lat[k];
          }
          all_med[busy][r] = median(lat, n);
          printf("phase %s round %d gets %d mean_us %.1f median_us %.1f max_us %.1f\n",
                 busy ? "busy" : "idle", r, n, n ? sum / n : 0.0, all_med[busy][r], mx);
          fflush(stdout);
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  if (rank == 0) {
    MPI_Win_unlock(1, win);
    med[0] = median(all_med[0], rounds);
    med[1] = median(all_med[1], rounds);
    printf("ratio busy/idle median %.3f (idle median_us %.1f, busy median_us %.1f)\n",
           med[0] > 0 ? med[1] / med[0] : 0.0, med[0], med[1]);
  }
  MPI_Win_free(&win);
  free(lat);
  MPI_Finalize();
  return 0;
}
