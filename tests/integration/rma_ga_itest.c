/* rma_ga_itest — Global Arrays (Debian libglobalarrays-dev, over ARMCI-MPI,
 * i.e. MPI-3 one-sided) on every rank, unmodified (plain mpicc).
 *
 * A 2-D N x N array of doubles distributed over all ranks:
 *   put         each rank writes the row block of its right-hand neighbour,
 *               A(i,j) = 1000 i + j;
 *   get         each rank reads the whole array back and checks every value;
 *   accumulate  each rank adds (r + 1) (i + j) to the whole array
 *               (NGA_Acc, alpha 1): A = 1000 i + j + (i + j) p (p + 1) / 2;
 *   read-inc    each rank takes READ_INC tickets from a one-element counter
 *               (NGA_Read_inc): the tickets of all ranks are 0 .. p*READ_INC-1,
 *               each once, and the counter ends at p * READ_INC.
 * Every value is checked against the computed reference; the line
 * "RESULT ga ..." (sums and a digest of the final array) is identical for
 * any layout, so a driver compares it with a native run's. Exit 0 and
 * "PASS ga" on rank 0 only when every rank agreed. */
#include <ga.h>
#include <macdecls.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 48
#define READ_INC 25

static int me, nproc;

static void fail(const char* what, long i, long j, double got, double want) {
  fprintf(stderr, "FAIL ga rank %d: %s at (%ld,%ld): %.17g, expected %.17g\n", me, what, i, j, got,
          want);
  fflush(stderr);
  GA_Error("rma_ga_itest: wrong value", 1);
}

/* Reads the whole array and compares it with ref(i, j); returns a digest. */
static uint64_t check_all(int g, double (*ref)(long, long), const char* what, double* buf) {
  int lo[2] = {0, 0}, hi[2] = {N - 1, N - 1}, ld = N;
  uint64_t h = 1469598103934665603ull;
  long i, j;
  NGA_Get(g, lo, hi, buf, &ld);
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      double v = buf[i * N + j];
      unsigned char b[sizeof v];
      size_t k;
      if (v != ref(i, j)) fail(what, i, j, v, ref(i, j));
      memcpy(b, &v, sizeof v);
      for (k = 0; k < sizeof v; k++) h = (h ^ b[k]) * 1099511628211ull;
    }
  return h;
}

static double ref_put(long i, long j) { return 1000.0 * i + j; }
static double ref_acc(long i, long j) {
  return 1000.0 * i + j + (double)(i + j) * nproc * (nproc + 1) / 2.0;
}

int main(int argc, char** argv) {
  int dims[2] = {N, N}, one = 1, g, gc, lo[2], hi[2], ld = N, k, rows, first, nb;
  int cnt_lo = 0, cnt_hi = 0;
  double *buf, alpha = 1.0;
  long *tickets, *all, total;
  char* seen;
  uint64_t h_put, h_acc;

  MPI_Init(&argc, &argv);
  GA_Initialize();
  me = GA_Nodeid();
  nproc = GA_Nnodes();
  buf = malloc(sizeof(double) * N * N);
  tickets = malloc(sizeof(long) * READ_INC);
  all = malloc(sizeof(long) * READ_INC * nproc);
  seen = calloc((size_t)READ_INC * nproc, 1);
  if (!buf || !tickets || !all || !seen) GA_Error("rma_ga_itest: out of memory", 0);

  g = NGA_Create(C_DBL, 2, dims, "A", NULL);
  if (!g) GA_Error("rma_ga_itest: NGA_Create failed", 0);
  GA_Zero(g);

  /* put: rank r writes the row block of rank (r + 1) % p */
  nb = (me + 1) % nproc;
  rows = N / nproc;
  first = nb * rows;
  if (nb == nproc - 1) rows = N - first;
  for (k = 0; k < rows * N; k++) buf[k] = ref_put(first + k / N, k % N);
  lo[0] = first;
  lo[1] = 0;
  hi[0] = first + rows - 1;
  hi[1] = N - 1;
  if (rows > 0) NGA_Put(g, lo, hi, buf, &ld);
  GA_Sync();
  h_put = check_all(g, ref_put, "get after put", buf);
  GA_Sync();

  /* accumulate: everyone adds (r + 1)(i + j) to the whole array */
  for (k = 0; k < N * N; k++) buf[k] = (double)(me + 1) * (k / N + k % N);
  lo[0] = lo[1] = 0;
  hi[0] = hi[1] = N - 1;
  NGA_Acc(g, lo, hi, buf, &ld, &alpha);
  GA_Sync();
  h_acc = check_all(g, ref_acc, "get after accumulate", buf);

  /* read-increment counter */
  gc = NGA_Create(C_LONG, 1, &one, "counter", NULL);
  if (!gc) GA_Error("rma_ga_itest: NGA_Create(counter) failed", 0);
  GA_Zero(gc);
  GA_Sync();
  for (k = 0; k < READ_INC; k++) tickets[k] = NGA_Read_inc(gc, &cnt_lo, 1);
  GA_Sync();
  MPI_Allgather(tickets, READ_INC, MPI_LONG, all, READ_INC, MPI_LONG, MPI_COMM_WORLD);
  for (k = 0; k < READ_INC * nproc; k++) {
    if (all[k] < 0 || all[k] >= (long)READ_INC * nproc || seen[all[k]])
      fail("NGA_Read_inc ticket repeated or out of range", k, 0, (double)all[k], -1);
    seen[all[k]] = 1;
  }
  for (k = 1; k < READ_INC; k++)
    if (tickets[k] <= tickets[k - 1])
      fail("NGA_Read_inc tickets of one rank not increasing", k, 0, (double)tickets[k], -1);
  NGA_Get(gc, &cnt_lo, &cnt_hi, &total, &one);
  if (total != (long)READ_INC * nproc)
    fail("final counter", 0, 0, (double)total, (double)READ_INC * nproc);

  GA_Sync();
  if (me == 0) {
    printf("RESULT ga n=%d put_digest=%016llx acc_digest=%016llx counter=%ld\n", N,
           (unsigned long long)h_put, (unsigned long long)h_acc, total);
    printf("PASS ga %d ranks: put, get, accumulate, %d read-inc each\n", nproc, READ_INC);
    fflush(stdout);
  }
  GA_Destroy(gc);
  GA_Destroy(g);
  free(buf);
  free(tickets);
  free(all);
  free(seen);
  GA_Terminate();
  MPI_Finalize();
  return 0;
}
