/* Neighbourhood exchange benchmarks, against libmmpi.
 * Usage: neighbor_bench alltoall BYTES ITERS
 *          2-D periodic Cartesian (Dims_create), BYTES per neighbour:
 *          MMPI_Neighbor_alltoall against the same exchange written as
 *          MMPI_Isend/Irecv/Waitall, alternating in rounds of ITERS so both
 *          see the same load. Prints, on rank 0,
 *          "alltoall,<bytes>,<neighbor_us>,<isend_us>,<ratio>"
 *          (microseconds per exchange, mean over the run after one warm-up round).
 *        neighbor_bench stencil ROWS COLS BYTES STEPS
 *          a ROWS x COLS periodic 5-point stencil, BYTES per halo, for
 *          reorder = 0 and 1 in alternating rounds: time per step and the
 *          halo bytes that cross the clusters per step.
 *          "stencil,<reorder>,<cut_bytes>,<total_bytes>,<us_per_step>"
 * Every received halo is checked (first and last int of each block). */
#include <mmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, nlow;

static void die(const char* what) {
  fprintf(stderr, "neighbor_bench: rank %d: %s\n", rank, what);
  MMPI_Abort(MMPI_COMM_WORLD, 1);
}

/* Fills send block m with (rank, m) and checks that receive block i holds
 * what in[i] put in the block it sent us. */
static void fill(int* buf, int deg, int n, int me) {
  for (int m = 0; m < deg; ++m) {
    buf[m * n] = me * 16 + m;
    buf[m * n + n - 1] = -(me * 16 + m);
  }
}

static double exchange(MPI_Comm c, int deg, const int* nbr, int* sb, int* rb, int n, int iters,
                       int neighbor) {
  MPI_Request req[16];
  MMPI_Barrier(c);
  double t0 = MMPI_Wtime();
  for (int it = 0; it < iters; ++it) {
    if (neighbor) {
      if (MMPI_Neighbor_alltoall(sb, n, MPI_INT, rb, n, MPI_INT, c) != MPI_SUCCESS) die("neighbor");
    } else {
      for (int i = 0; i < deg; ++i) MMPI_Irecv(rb + i * n, n, MPI_INT, nbr[i], 77, c, &req[i]);
      for (int i = 0; i < deg; ++i)
        MMPI_Isend(sb + i * n, n, MPI_INT, nbr[i], 77, c, &req[deg + i]);
      if (MMPI_Waitall(2 * deg, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) die("waitall");
    }
  }
  double t = (MMPI_Wtime() - t0) / iters, tmax;
  MMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, c);
  for (int i = 0; i < deg; ++i)
    if (nbr[i] != MPI_PROC_NULL && (rb[i * n] < 0 || rb[i * n + n - 1] != -rb[i * n]))
      die("halo check failed");
  return tmax;
}

static MPI_Comm cart(int d0, int d1, int reorder, int nbr[4]) {
  int dims[2] = {d0, d1}, periods[2] = {1, 1};
  MPI_Comm c;
  if (MMPI_Cart_create(MMPI_COMM_WORLD, 2, dims, periods, reorder, &c) != MPI_SUCCESS) die("cart");
  for (int d = 0; d < 2; ++d) MMPI_Cart_shift(c, d, 1, &nbr[2 * d], &nbr[2 * d + 1]);
  return c;
}

int main(int argc, char** argv) {
  MMPI_Init(&argc, &argv);
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  const char* x = getenv("MMPI_NP_LOW");
  nlow = x ? atoi(x) : size;
  if (argc >= 4 && !strcmp(argv[1], "alltoall")) {
    int bytes = atoi(argv[2]), iters = atoi(argv[3]), n = bytes / (int)sizeof(int);
    int dims[2] = {0, 0}, nbr[4];
    MMPI_Dims_create(size, 2, dims);
    MPI_Comm c = cart(dims[0], dims[1], 0, nbr);
    int me;
    MMPI_Comm_rank(c, &me);
    int* sb = malloc(sizeof(int) * 4 * n);
    int* rb = malloc(sizeof(int) * 4 * n);
    memset(sb, 0, sizeof(int) * 4 * n);
    fill(sb, 4, n, me);
    double tn = 0, tp = 0;
    exchange(c, 4, nbr, sb, rb, n, 2, 1);
    exchange(c, 4, nbr, sb, rb, n, 2, 0);
    for (int round = 0; round < 5; ++round) {
      tn += exchange(c, 4, nbr, sb, rb, n, iters, 1);
      tp += exchange(c, 4, nbr, sb, rb, n, iters, 0);
    }
    if (rank == 0)
      printf("alltoall,%d,%.1f,%.1f,%.3f\n", bytes, tn / 5 * 1e6, tp / 5 * 1e6, tn / tp);
  } else if (argc >= 6 && !strcmp(argv[1], "stencil")) {
    int rows = atoi(argv[2]), cols = atoi(argv[3]), bytes = atoi(argv[4]), steps = atoi(argv[5]);
    int n = bytes / (int)sizeof(int);
    if (rows * cols != size) die("ROWS x COLS must be the number of ranks");
    int* sb = calloc(4 * (size_t)n, sizeof(int));
    int* rb = calloc(4 * (size_t)n, sizeof(int));
    double t[2] = {0, 0};
    long cut[2] = {0, 0}, total = 0;
    MPI_Comm c[2];
    int nbr[2][4];
    for (int r = 0; r < 2; ++r) {
      c[r] = cart(rows, cols, r, nbr[r]);
      /* Halo messages that cross the bridge: my world rank's cluster against
       * each neighbour's (Group_translate_ranks to world). */
      MPI_Group g, wg;
      MMPI_Comm_group(c[r], &g);
      MMPI_Comm_group(MMPI_COMM_WORLD, &wg);
      int w[4], mine = 0, across = 0;
      MMPI_Group_translate_ranks(g, 4, nbr[r], wg, w);
      for (int i = 0; i < 4; ++i) across += (w[i] < nlow) != (rank < nlow);
      mine = across;
      long sum = 0, m = mine;
      MMPI_Allreduce(&m, &sum, 1, MPI_LONG, MPI_SUM, MMPI_COMM_WORLD);
      cut[r] = sum * (long)bytes;
      total = 4L * size * bytes;
      MMPI_Group_free(&g);
      MMPI_Group_free(&wg);
      int me;
      MMPI_Comm_rank(c[r], &me);
      (void)me;
    }
    for (int r = 0; r < 2; ++r) {
      int me;
      MMPI_Comm_rank(c[r], &me);
      fill(sb, 4, n, me);
      exchange(c[r], 4, nbr[r], sb, rb, n, 2, 0);
    }
    for (int round = 0; round < 5; ++round)
      for (int r = 0; r < 2; ++r) {
        int me;
        MMPI_Comm_rank(c[r], &me);
        fill(sb, 4, n, me);
        t[r] += exchange(c[r], 4, nbr[r], sb, rb, n, steps, 0);
      }
    if (rank == 0)
      for (int r = 0; r < 2; ++r)
        printf("stencil,%d,%ld,%ld,%.1f\n", r, cut[r], total, t[r] / 5 * 1e6);
  } else {
    if (rank == 0)
      fprintf(stderr, "usage: %s alltoall BYTES ITERS | stencil ROWS COLS BYTES STEPS\n", argv[0]);
    MMPI_Finalize();
    return 2;
  }
  MMPI_Finalize();
  return 0;
}
