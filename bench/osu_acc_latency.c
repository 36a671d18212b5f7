/* osu_acc_latency — OSU 7.2-style MPI_Accumulate latency test: rank 0 adds
 * (MPI_SUM) SIZE bytes of uint32_t into rank 1's window (fence, pscw: the
 * ranks take turns); sizes not a multiple of 4 are skipped. After n
 * operations every element holds start + n * data mod 2^32. Not bytes: Open
 * MPI 4.1.4's op/avx saturates MPI_SUM on 8-bit types from 16 elements on.
 * Plain MPI (mpicc); options and loops in osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

static void acc_op(struct rma_ctx* c, long size, int slot) {
  int n = (int)(size / 4);
  RMA_CHECK(MPI_Accumulate(c->sbuf, n, MPI_UINT32_T, c->peer, rma_disp(c, 0), n, MPI_UINT32_T,
                           MPI_SUM, c->win));
  (void)slot;
}

static void acc_init(struct rma_ctx* c, long size, int slots) {
  (void)slots;
  osu_fill(c->sbuf, size, rma_seed(size, 0, c->rank, 0));
  osu_fill(c->win_base, size, rma_seed(size, 0, c->rank, 1));
}

static const char* acc_check(struct rma_ctx* c, long size, int slots, long n, int as_origin,
                             int as_target) {
  (void)slots;
  if (as_origin) {
    osu_fill(c->xbuf, size, rma_seed(size, 0, c->rank, 0));
    if (rma_compare(c, "origin buffer changed by MPI_Accumulate", c->sbuf, c->xbuf, size))
      return c->why;
  }
  if (!as_target) return NULL;
  rma_expect_sum(c, size, rma_seed(size, 0, c->rank, 1), rma_seed(size, 0, c->peer, 0), n);
  return rma_compare(c, "target window after MPI_Accumulate(MPI_SUM)", c->win_base, c->xbuf, size);
}

static const struct rma_bench bench = {
    .title = "MPI_Accumulate Latency",
    .kind = RMA_LATENCY,
    .syncs = RMA_ALL_SYNCS,
    .default_sync = RMA_FLUSH,
    .elem_bytes = 4,
    .lock_type = MPI_LOCK_EXCLUSIVE,
    .op = acc_op,
    .init = acc_init,
    .check = acc_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
