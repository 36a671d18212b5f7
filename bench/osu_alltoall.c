/* osu_alltoall — OSU-style MMPI_Alltoall latency (MPI_CHAR; size = bytes
 * sent to each rank).
 *
 * Built against libmmpi (mmpi.h), or against plain MPI with -DMMPI_NATIVE.
 * Verification iteration: the block rank s sends to rank d carries a pattern
 * derived from (size, s, d); every rank checks all blocks it received (into
 * a poisoned buffer) and that its send buffer is unchanged. See osu_coll.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_coll.h"

struct ctx {
  int rank, nranks;
  unsigned char *sbuf, *rbuf;
};

static void verify(void* vc, long size) {
  struct ctx* c = vc;
  char what[96];
  int p;
  for (p = 0; p < c->nranks; p++) {
    osu_fill(c->sbuf + (long)p * size, size, coll_seed(size, c->rank, p));
    osu_poison(c->rbuf + (long)p * size, size, coll_seed(size, p, c->rank));
  }
  COLL_CHECK(
      MMPI_Alltoall(c->sbuf, (int)size, MPI_CHAR, c->rbuf, (int)size, MPI_CHAR, MMPI_COMM_WORLD));
  for (p = 0; p < c->nranks; p++) {
    snprintf(what, sizeof what, "block received from rank %d", p);
    coll_verify_bytes(c->rbuf + (long)p * size, size, coll_seed(size, p, c->rank), c->rank, size,
                      what);
    snprintf(what, sizeof what, "send buffer block for rank %d modified by the collective", p);
    coll_verify_bytes(c->sbuf + (long)p * size, size, coll_seed(size, c->rank, p), c->rank, size,
                      what);
  }
}

static void op(void* vc, long size) {
  struct ctx* c = vc;
  COLL_CHECK(
      MMPI_Alltoall(c->sbuf, (int)size, MPI_CHAR, c->rbuf, (int)size, MPI_CHAR, MMPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  struct coll_opts o;
  struct ctx c;
  int rc;

  rc = coll_start(&argc, &argv, COLL_ALLTOALL, &c.rank, &c.nranks, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  c.sbuf = coll_alloc((size_t)o.max_size * (size_t)c.nranks);
  c.rbuf = coll_alloc((size_t)o.max_size * (size_t)c.nranks);
  coll_loop(COLL_ALLTOALL, &o, c.rank, c.nranks, verify, op, &c);
  free(c.sbuf);
  free(c.rbuf);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
