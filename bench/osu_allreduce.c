/* osu_allreduce — OSU-style MMPI_Allreduce latency (MPI_FLOAT, MPI_SUM;
 * size in bytes = count * 4).
 *
 * Built against libmmpi (mmpi.h), or against plain MPI with -DMMPI_NATIVE.
 * Verification iteration: every rank contributes integer-valued floats that
 * depend on rank, element and size; every rank checks every element of the
 * sum (exact in any summation order). See osu_coll.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_coll.h"

struct ctx {
  int rank, nranks;
  float *sbuf, *rbuf;
};

static void verify(void* vc, long size) {
  struct ctx* c = vc;
  long count = size / 4;
  coll_fill_red(c->sbuf, count, size, c->rank);
  coll_poison_floats(c->rbuf, count);
  COLL_CHECK(MMPI_Allreduce(c->sbuf, c->rbuf, (int)count, MPI_FLOAT, MPI_SUM, MMPI_COMM_WORLD));
  coll_verify_sum(c->rbuf, count, c->nranks, c->rank, size, "allreduced sum");
  coll_verify_red_input(c->sbuf, count, size, c->rank);
}

static void op(void* vc, long size) {
  struct ctx* c = vc;
  COLL_CHECK(
      MMPI_Allreduce(c->sbuf, c->rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, MMPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  struct coll_opts o;
  struct ctx c;
  int rc;

  rc = coll_start(&argc, &argv, COLL_ALLREDUCE, &c.rank, &c.nranks, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  c.sbuf = coll_alloc((size_t)o.max_size);
  c.rbuf = coll_alloc((size_t)o.max_size);
  coll_loop(COLL_ALLREDUCE, &o, c.rank, c.nranks, verify, op, &c);
  free(c.sbuf);
  free(c.rbuf);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
