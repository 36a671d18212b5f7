/* osu_cas_latency — OSU 7.2-style MPI_Compare_and_swap latency test: rank 0
 * swaps a long long in rank 1's window (fence, pscw: the ranks take turns).
 * The k-th operation compares with start + k and swaps in start + k + 1, so
 * every one must succeed: after n the window holds start + n and the last
 * result start + n - 1; one lost, repeated or failed swap breaks the chain.
 * Plain MPI (mpicc); options and loops in osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

static long long start_of(int rank) { return 1000000007LL * (rank + 5); }

static void cas_op(struct rma_ctx* c, long size, int slot) {
  long long compare = start_of(c->peer) + c->ops_done, swap = compare + 1;
  memcpy(c->cbuf, &compare, sizeof compare);
  memcpy(c->sbuf, &swap, sizeof swap);
  c->ops_done++;
  RMA_CHECK(MPI_Compare_and_swap(c->sbuf, c->cbuf, c->rbuf, MPI_LONG_LONG, c->peer, rma_disp(c, 0),
                                 c->win));
  (void)size;
  (void)slot;
}

static void cas_init(struct rma_ctx* c, long size, int slots) {
  long long start = start_of(c->rank), none = -1;
  (void)size;
  (void)slots;
  memcpy(c->win_base, &start, sizeof start);
  memcpy(c->rbuf, &none, sizeof none);
}

static const char* cas_check(struct rma_ctx* c, long size, int slots, long n, int as_origin,
                             int as_target) {
  long long got, want;
  (void)size;
  (void)slots;
  if (as_origin) {
    memcpy(&got, c->rbuf, sizeof got);
    want = start_of(c->peer) + n - 1;
    if (got != want) {
      snprintf(c->why, sizeof c->why, "last result of MPI_Compare_and_swap is %lld, expected %lld",
               got, want);
      return c->why;
    }
  }
  if (as_target) {
    memcpy(&got, c->win_base, sizeof got);
    want = start_of(c->rank) + n;
    if (got != want) {
      snprintf(c->why, sizeof c->why,
               "target window after %ld chained MPI_Compare_and_swap is %lld, expected %lld", n,
               got, want);
      return c->why;
    }
  }
  return NULL;
}

static const struct rma_bench bench = {
    .title = "MPI_Compare_and_swap Latency",
    .kind = RMA_LATENCY,
    .syncs = RMA_ALL_SYNCS,
    .default_sync = RMA_FLUSH,
    .fixed_size = 8,
    .lock_type = MPI_LOCK_EXCLUSIVE,
    .op = cas_op,
    .init = cas_init,
    .check = cas_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
