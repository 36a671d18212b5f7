/* osu_barrier — OSU-style MMPI_Barrier latency.
 *
 * Built against libmmpi (mmpi.h), or against plain MPI with -DMMPI_NATIVE.
 * There are no message sizes (-m is accepted and ignored). Verification,
 * before the warm-up: twice, one rank (rank 0, then the last rank, i.e. one
 * in each cluster of a zipper job) enters the barrier LATE_MS late; every
 * other rank checks on its own clock that its barrier did not return before
 * at least half of that time had passed. See osu_coll.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_coll.h"

#define LATE_MS 100

static void verify(int rank, int nranks) {
  int late_ranks[2] = {0, nranks - 1}, k;
  for (k = 0; k < 2; k++) {
    int late = late_ranks[k];
    double t0, t1;
    COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));
    t0 = MMPI_Wtime();
    if (rank == late) {
      struct timespec ts = {0, LATE_MS * 1000000L};
      while (nanosleep(&ts, &ts) != 0)
        ;
    }
    COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));
    t1 = MMPI_Wtime();
    if (rank != late && (t1 - t0) * 1e3 < LATE_MS / 2.0) {
      char msg[256];
      snprintf(msg, sizeof msg,
               "the barrier returned after %.3f ms although rank %d entered it %d ms "
               "late: it does not synchronise",
               (t1 - t0) * 1e3, late, LATE_MS);
      coll_fail(rank, -1, msg);
    }
  }
}

int main(int argc, char** argv) {
  struct coll_opts o;
  int rank = 0, nranks = 0, rc, i;
  double timer = 0.0;

  rc = coll_start(&argc, &argv, COLL_BARRIER, &rank, &nranks, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  verify(rank, nranks);
  COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));

  for (i = 0; i < o.iters + o.skip; i++) {
    double t0 = MMPI_Wtime(), t1;
    COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));
    t1 = MMPI_Wtime();
    if (i >= o.skip) timer += t1 - t0;
  }
  coll_report(COLL_BARRIER, &o, rank, nranks, 0, timer, o.iters);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
