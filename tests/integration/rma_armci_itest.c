/* rma_armci_itest — ARMCI-MPI (Debian libarmci-mpi-dev: ARMCI over MPI-3
 * one-sided) on every rank, unmodified (plain mpicc).
 *
 * Each rank allocates (ARMCI_Malloc) M doubles and one long, then:
 *   put      contiguous ARMCI_Put of M/2 values, and a strided ARMCI_PutS of
 *            ROWS x COLS values (stride 2 COLS), into rank (r + 1) % p;
 *   get      ARMCI_Get of rank (r + 1) % p's whole array: what r wrote there;
 *   acc      every rank adds (r + 1) * k to element k of every rank's array
 *            (ARMCI_Acc, ARMCI_ACC_DBL, scale r + 1);
 *   rmw      TICKETS ARMCI_FETCH_AND_ADD_LONG on rank 0's long: the tickets
 *            of all ranks are 0 .. p*TICKETS-1, each once.
 * Every value is checked against the computed reference (local memory read
 * inside ARMCI_Access_begin/end); "RESULT armci ..." is the same for any
 * layout of the same p, for the driver to compare with a native run. */
#include <armci.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 1024
#define ROWS 8
#define COLS 4
#define TICKETS 20

static int me, nproc;

static void fail(const char* what, long k, double got, double want) {
  fprintf(stderr, "FAIL armci rank %d: %s at %ld: %.17g, expected %.17g\n", me, what, k, got, want);
  fflush(stderr);
  ARMCI_Error("rma_armci_itest: wrong value", 1);
}

/* What rank `writer` puts into its right-hand neighbour, element k. */
static double written(int writer, long k) {
  long s;
  if (k < M / 2) return writer * 1e6 + k;
  s = k - M / 2; /* strided patch: row s / (2 COLS), column s % (2 COLS) */
  if (s / (2 * COLS) < ROWS && s % (2 * COLS) < COLS) return -(writer * 1e6 + s);
  return 0.0;
}

static uint64_t digest(const double* v, long n, uint64_t h) {
  long i;
  for (i = 0; i < n; i++) {
    unsigned char b[sizeof(double)];
    size_t k;
    memcpy(b, &v[i], sizeof b);
    for (k = 0; k < sizeof b; k++) h = (h ^ b[k]) * 1099511628211ull;
  }
  return h;
}

int main(int argc, char** argv) {
  void **arr, **cnt;
  double *src, *buf, scale;
  long k, one = 1, *tickets, *all, total = 0;
  int t, right, left, src_stride, dst_stride, count[2];
  char* seen;
  uint64_t h = 1469598103934665603ull, sum_h;

  MPI_Init(&argc, &argv);
  ARMCI_Init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nproc);
  right = (me + 1) % nproc;
  left = (me + nproc - 1) % nproc;
  arr = malloc(sizeof(void*) * nproc);
  cnt = malloc(sizeof(void*) * nproc);
  src = malloc(sizeof(double) * M);
  buf = malloc(sizeof(double) * M);
  tickets = malloc(sizeof(long) * TICKETS);
  all = malloc(sizeof(long) * TICKETS * nproc);
  seen = calloc((size_t)TICKETS * nproc, 1);
  if (!arr || !cnt || !src || !buf || !tickets || !all || !seen)
    ARMCI_Error("rma_armci_itest: out of memory", 0);
  if (ARMCI_Malloc(arr, sizeof(double) * M) || ARMCI_Malloc(cnt, sizeof(long)))
    ARMCI_Error("rma_armci_itest: ARMCI_Malloc failed", 0);
  ARMCI_Access_begin(arr[me]);
  memset(arr[me], 0, sizeof(double) * M);
  ARMCI_Access_end(arr[me]);
  ARMCI_Access_begin(cnt[me]);
  *(long*)cnt[me] = 0;
  ARMCI_Access_end(cnt[me]);
  ARMCI_Barrier();

  /* put: contiguous first half, strided patch in the second */
  for (k = 0; k < M; k++) src[k] = written(me, k);
  if (ARMCI_Put(src, arr[right], sizeof(double) * (M / 2), right))
    ARMCI_Error("rma_armci_itest: ARMCI_Put failed", 0);
  src_stride = dst_stride = (int)(sizeof(double) * 2 * COLS);
  count[0] = (int)(sizeof(double) * COLS);
  count[1] = ROWS;
  if (ARMCI_PutS(src + M / 2, &src_stride, (double*)arr[right] + M / 2, &dst_stride, count, 1,
                 right))
    ARMCI_Error("rma_armci_itest: ARMCI_PutS failed", 0);
  ARMCI_Barrier();

  /* get back what this rank wrote; read what the left neighbour wrote here */
  if (ARMCI_Get(arr[right], buf, sizeof(double) * M, right))
    ARMCI_Error("rma_armci_itest: ARMCI_Get failed", 0);
  for (k = 0; k < M; k++)
    if (buf[k] != written(me, k))
      fail("ARMCI_Get of the right neighbour", k, buf[k], written(me, k));
  ARMCI_Access_begin(arr[me]);
  for (k = 0; k < M; k++)
    if (((double*)arr[me])[k] != written(left, k))
      fail("local array after the left neighbour's puts", k, ((double*)arr[me])[k],
           written(left, k));
  ARMCI_Access_end(arr[me]);
  ARMCI_Barrier();

  /* accumulate into every rank */
  for (k = 0; k < M; k++) src[k] = (double)k;
  scale = me + 1;
  for (t = 0; t < nproc; t++)
    if (ARMCI_Acc(ARMCI_ACC_DBL, &scale, src, arr[(me + t) % nproc], sizeof(double) * M,
                  (me + t) % nproc))
      ARMCI_Error("rma_armci_itest: ARMCI_Acc failed", 0);
  ARMCI_Barrier();
  ARMCI_Access_begin(arr[me]);
  for (k = 0; k < M; k++) {
    double want = written(left, k) + (double)k * nproc * (nproc + 1) / 2.0;
    if (((double*)arr[me])[k] != want) fail("after ARMCI_Acc", k, ((double*)arr[me])[k], want);
  }
  h = digest((double*)arr[me], M, h);
  ARMCI_Access_end(arr[me]);

  /* fetch-and-add tickets on rank 0 */
  for (t = 0; t < TICKETS; t++) {
    long old = -1;
    if (ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, cnt[0], (int)one, 0))
      ARMCI_Error("rma_armci_itest: ARMCI_Rmw failed", 0);
    tickets[t] = old;
  }
  ARMCI_Barrier();
  MPI_Allgather(tickets, TICKETS, MPI_LONG, all, TICKETS, MPI_LONG, MPI_COMM_WORLD);
  for (k = 0; k < TICKETS * nproc; k++) {
    if (all[k] < 0 || all[k] >= (long)TICKETS * nproc || seen[all[k]])
      fail("ARMCI_Rmw ticket repeated or out of range", k, (double)all[k], -1);
    seen[all[k]] = 1;
  }
  if (ARMCI_Get(cnt[0], &total, sizeof total, 0)) ARMCI_Error("rma_armci_itest: get counter", 0);
  if (total != (long)TICKETS * nproc) fail("final counter", 0, (double)total, TICKETS * nproc);

  /* one digest over all ranks' arrays (XOR: independent of arrival order) */
  MPI_Reduce(&h, &sum_h, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
  ARMCI_Barrier();
  if (me == 0) {
    printf("RESULT armci p=%d m=%d digest=%016llx counter=%ld\n", nproc, M,
           (unsigned long long)sum_h, total);
    printf("PASS armci %d ranks: put, strided put, get, acc, %d fetch-and-add each\n", nproc,
           TICKETS);
    fflush(stdout);
  }
  ARMCI_Free(cnt[me]);
  ARMCI_Free(arr[me]);
  free(arr);
  free(cnt);
  free(src);
  free(buf);
  free(tickets);
  free(all);
  free(seen);
  ARMCI_Finalize();
  MPI_Finalize();
  return 0;
}
