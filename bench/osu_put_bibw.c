/* osu_put_bibw — OSU 7.2-style MPI_Put bi-directional bandwidth test: both
 * ranks put WINDOW messages per epoch into each other's window at once
 * (fence or pscw, as OSU offers). Plain MPI (mpicc); options and checks in
 * osu_rma.h. */
#define _POSIX_C_SOURCE 200809L

#include "osu_rma.h"

static const struct rma_bench bench = {
    .title = "MPI_Put Bi-directional Bandwidth",
    .kind = RMA_BIBW,
    .syncs = (1u << RMA_FENCE) | (1u << RMA_PSCW),
    .default_sync = RMA_PSCW,
    .lock_type = MPI_LOCK_EXCLUSIVE,
    .op = rma_put_op,
    .init = rma_put_init,
    .check = rma_put_check,
};

int main(int argc, char** argv) { return rma_main(argc, argv, &bench); }
