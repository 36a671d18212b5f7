/* osu_fop_latency — OSU 7.2-style MPI_Fetch_and_op latency test: rank 0 adds
 * a long long (MPI_SUM) to rank 1's window and fetches the old value (fence,
 * pscw: the ranks take turns). After n operations the window holds
 * start + n * addend and the last result start + (n-1) * addend. Plain MPI
 * (mpicc); options and loops in osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

/* Values below 2^40, so that sums of up to 2^22 operations never overflow. */
static long long start_of(int rank) { return 1000000007LL * (rank + 3); }
static long long addend_of(int rank) { return 7919LL * (rank + 1); }

static void fop_op(struct rma_ctx* c, long size, int slot) {
  RMA_CHECK(
      MPI_Fetch_and_op(c->sbuf, c->rbuf, MPI_LONG_LONG, c->peer, rma_disp(c, 0), MPI_SUM, c->win));
  (void)size;
  (void)slot;
}

static void fop_init(struct rma_ctx* c, long size, int slots) {
  long long add = addend_of(c->rank), start = start_of(c->rank), none = -1;
  (void)size;
  (void)slots;
  memcpy(c->sbuf, &add, sizeof add);
  memcpy(c->win_base, &start, sizeof start);
  memcpy(c->rbuf, &none, sizeof none);
}

static const char* fop_check(struct rma_ctx* c, long size, int slots, long n, int as_origin,
                             int as_target) {
  long long got, want;
  (void)size;
  (void)slots;
  if (as_origin) {
    memcpy(&got, c->rbuf, sizeof got);
    want = start_of(c->peer) + (n - 1) * addend_of(c->rank);
    if (got != want) {
      snprintf(c->why, sizeof c->why, "last result of MPI_Fetch_and_op is %lld, expected %lld", got,
               want);
      return c->why;
    }
  }
  if (as_target) {
    memcpy(&got, c->win_base, sizeof got);
    want = start_of(c->rank) + n * addend_of(c->peer);
    if (got != want) {
      snprintf(c->why, sizeof c->why,
               "target window after %ld MPI_Fetch_and_op(MPI_SUM) is %lld, expected %lld", n, got,
               want);
      return c->why;
    }
  }
  return NULL;
}

static const struct rma_bench bench = {
    .title = "MPI_Fetch_and_op Latency",
    .kind = RMA_LATENCY,
    .syncs = RMA_ALL_SYNCS,
    .default_sync = RMA_FLUSH,
    .fixed_size = 8,
    .lock_type = MPI_LOCK_EXCLUSIVE,
    .op = fop_op,
    .init = fop_init,
    .check = fop_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
