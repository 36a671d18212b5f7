/* halo_bench — a 2-D 5-point halo exchange, timed per step, every byte checked.
 *
 *   halo_bench [--rows R] [--steps N] [--warmup W] [--bytes-ew B] [--bytes-ns B]
 *
 * The world's ranks form an R x (size/R) grid numbered row-major (rank r sits
 * at row r / cols, column r % cols), the layout a code gets when it numbers
 * its subdomains in reading order and leaves MPI_COMM_WORLD's order alone. Each
 * step every rank exchanges one message with each existing neighbour (no
 * wrap-around): --bytes-ew bytes east and west, --bytes-ns bytes north and
 * south (defaults 800 and 1600: the profile test's halo), then checks every
 * received byte against the pattern its sender must have written for that step.
 * With R = 2, block order over two clusters of size/2 puts one row in each, so
 * every north-south message crosses; the best cut crosses only the middle
 * columns' east-west messages (what zipper-place finds, docs/placement.md).
 *
 * Plain MPI: built with mpicc like any user's code, run across the clusters
 * through zipper-run --transparent (bench/zipper_bench_placement.py).
 * Prints one line on rank 0:
 *   halo: ranks=16 grid=2x8 steps=2000 bytes_ew=800 bytes_ns=1600 us_per_step=123.4
 * where us_per_step is the slowest rank's time for the timed steps divided by
 * --steps (µs). Exits 1 with a line naming the rank, step, neighbour and byte
 * on a wrong byte; 2 on a usage error.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EAST, WEST, NORTH, SOUTH, NDIR };
static const char* dir_name[NDIR] = {"east", "west", "north", "south"};

static int rank, size;

static void die(int code, const char* what) {
  fprintf(stderr, "halo_bench: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, code);
}

/* The byte sender `from` writes at offset i of its message in `step`. */
static unsigned char pattern(int from, int step, int dir, long i) {
  return (unsigned char)(from * 131 + step * 31 + dir * 7 + i * 13);
}

static long arg_long(const char* flag, const char* value, long lo, long hi) {
  char* end = NULL;
  long v = value ? strtol(value, &end, 10) : 0;
  if (!value || *end || v < lo || v > hi) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s wants an integer in %ld..%ld", flag, lo, hi);
    die(2, msg);
  }
  return v;
}

int main(int argc, char** argv) {
  long rows = 2, steps = 1000, warmup = 50, bytes[NDIR] = {800, 800, 1600, 1600};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--rows"))
      rows = arg_long(argv[i], v, 1, size);
    else if (!strcmp(argv[i], "--steps"))
      steps = arg_long(argv[i], v, 1, 100000000);
    else if (!strcmp(argv[i], "--warmup"))
      warmup = arg_long(argv[i], v, 0, 100000000);
    else if (!strcmp(argv[i], "--bytes-ew"))
      bytes[EAST] = bytes[WEST] = arg_long(argv[i], v, 1, 1L << 30);
    else if (!strcmp(argv[i], "--bytes-ns"))
      bytes[NORTH] = bytes[SOUTH] = arg_long(argv[i], v, 1, 1L << 30);
    else
      die(2, "usage: halo_bench [--rows R] [--steps N] [--warmup W] [--bytes-ew B] [--bytes-ns B]");
    i++;
  }
  if (size % rows) die(2, "the number of ranks must be a multiple of --rows");
  long cols = size / rows, row = rank / cols, col = rank % cols;
  int peer[NDIR] = {col + 1 < cols ? rank + 1 : MPI_PROC_NULL, col > 0 ? rank - 1 : MPI_PROC_NULL,
                    row > 0 ? rank - (int)cols : MPI_PROC_NULL,
                    row + 1 < rows ? rank + (int)cols : MPI_PROC_NULL};
  /* What arrives from the east neighbour is what it sent west, and so on. */
  static const int opposite[NDIR] = {WEST, EAST, SOUTH, NORTH};
  unsigned char *out[NDIR], *in[NDIR];
  for (int d = 0; d < NDIR; d++) {
    out[d] = malloc((size_t)bytes[d]);
    in[d] = malloc((size_t)bytes[d]);
    if (!out[d] || !in[d]) die(1, "out of memory");
  }

  double t0 = 0;
  for (long s = 0; s < warmup + steps; s++) {
    int step = (int)s;
    if (s == warmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    MPI_Request req[2 * NDIR];
    int n = 0;
    for (int d = 0; d < NDIR; d++) {
      if (peer[d] == MPI_PROC_NULL) continue;
      memset(in[d], 0, (size_t)bytes[d]);
      MPI_Irecv(in[d], (int)bytes[d], MPI_BYTE, peer[d], opposite[d], MPI_COMM_WORLD, &req[n++]);
    }
    for (int d = 0; d < NDIR; d++) {
      if (peer[d] == MPI_PROC_NULL) continue;
      for (long i = 0; i < bytes[d]; i++) out[d][i] = pattern(rank, step, d, i);
      MPI_Isend(out[d], (int)bytes[d], MPI_BYTE, peer[d], d, MPI_COMM_WORLD, &req[n++]);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    for (int d = 0; d < NDIR; d++) {
      if (peer[d] == MPI_PROC_NULL) continue;
      for (long i = 0; i < bytes[d]; i++) {
        if (in[d][i] != pattern(peer[d], step, opposite[d], i)) {
          char msg[200];
          snprintf(msg, sizeof msg, "step %d: byte %ld from the %s neighbour (rank %d) is wrong",
                   step, i, dir_name[d], peer[d]);
          die(1, msg);
        }
      }
    }
  }
  double mine = MPI_Wtime() - t0, slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("halo: ranks=%d grid=%ldx%ld steps=%ld bytes_ew=%ld bytes_ns=%ld us_per_step=%.1f\n",
           size, rows, cols, steps, bytes[EAST], bytes[NORTH], slowest / (double)steps * 1e6);
  for (int d = 0; d < NDIR; d++) {
    free(out[d]);
    free(in[d]);
  }
  MPI_Finalize();
  return 0;
}
