/* osu_get_bw — OSU 7.2-style MPI_Get Bandwidth test: rank 0 gets WINDOW messages per epoch from
 * rank 1. Plain MPI (mpicc); options and checks in osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

static const struct rma_bench bench = {
    .title = "MPI_Get Bandwidth",
    .kind = RMA_BW,
    .syncs = RMA_ALL_SYNCS,
    .default_sync = RMA_FLUSH,
    .lock_type = MPI_LOCK_SHARED,
    .op = rma_get_op,
    .init = rma_get_init,
    .check = rma_get_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
