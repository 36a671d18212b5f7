/* osu_get_acc_latency — OSU 7.2-style MPI_Get_accumulate latency test: rank 0
 * adds (MPI_SUM) SIZE bytes of uint32_t into rank 1's window and fetches
 * what was there (fence, pscw: the ranks take turns; sizes not a multiple of
 * 4 are skipped). After n operations every element of the window holds
 * start + n * data and of the last result start + (n-1) * data, mod 2^32
 * (osu_acc_latency.c says why not bytes). Plain MPI (mpicc); options and loops in osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

static void get_acc_op(struct rma_ctx* c, long size, int slot) {
  int n = (int)(size / 4);
  RMA_CHECK(MPI_Get_accumulate(c->sbuf, n, MPI_UINT32_T, c->rbuf, n, MPI_UINT32_T, c->peer,
                               rma_disp(c, 0), n, MPI_UINT32_T, MPI_SUM, c->win));
  (void)slot;
}

static void get_acc_init(struct rma_ctx* c, long size, int slots) {
  (void)slots;
  osu_fill(c->sbuf, size, rma_seed(size, 0, c->rank, 0));
  osu_fill(c->win_base, size, rma_seed(size, 0, c->rank, 1));
  memset(c->rbuf, 0, (size_t)size);
}

static const char* get_acc_check(struct rma_ctx* c, long size, int slots, long n, int as_origin,
                                 int as_target) {
  (void)slots;
  if (as_origin) {
    rma_expect_sum(c, size, rma_seed(size, 0, c->peer, 1), rma_seed(size, 0, c->rank, 0), n - 1);
    if (rma_compare(c, "last result of MPI_Get_accumulate (value before the n-th sum)", c->rbuf,
                    c->xbuf, size))
      return c->why;
  }
  if (!as_target) return NULL;
  rma_expect_sum(c, size, rma_seed(size, 0, c->rank, 1), rma_seed(size, 0, c->peer, 0), n);
  return rma_compare(c, "target window after MPI_Get_accumulate(MPI_SUM)", c->win_base, c->xbuf,
                     size);
}

static const struct rma_bench bench = {
    .title = "MPI_Get_accumulate Latency",
    .kind = RMA_LATENCY,
    .syncs = RMA_ALL_SYNCS,
    .default_sync = RMA_FLUSH,
    .elem_bytes = 4,
    .lock_type = MPI_LOCK_EXCLUSIVE,
    .op = get_acc_op,
    .init = get_acc_init,
    .check = get_acc_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
