/* osu_put_bw — OSU 7.2-style MPI_Put Bandwidth test: rank 0 puts WINDOW messages per epoch to
 * rank 1. Plain MPI (mpicc); options and checks in osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

static const struct rma_bench bench = {
    .title = "MPI_Put Bandwidth",
    .kind = RMA_BW,
    .syncs = RMA_ALL_SYNCS,
    .default_sync = RMA_FLUSH,
    .lock_type = MPI_LOCK_EXCLUSIVE,
    .op = rma_put_op,
    .init = rma_put_init,
    .check = rma_put_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
