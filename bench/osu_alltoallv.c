/* osu_alltoallv — OSU-style MMPI_Alltoallv latency (MPI_CHAR; size = bytes
 * sent to each rank).
 *
 * Like OSU's osu_alltoallv every rank sends `size` bytes to every rank
 * (uniform counts), so the numbers compare with osu_alltoall. Unlike OSU the
 * receive displacements are reversed (the block from rank s lands at slot
 * nranks-1-s), in the verification iteration and the timed ones alike, so
 * that an implementation ignoring rdispls fails the check.
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
  int *scounts, *sdispls, *rcounts, *rdispls;
};

static void set_layout(struct ctx* c, long size) {
  int p;
  for (p = 0; p < c->nranks; p++) {
    c->scounts[p] = (int)size;
    c->sdispls[p] = (int)((long)p * size);
    c->rcounts[p] = (int)size;
    c->rdispls[p] = (int)((long)(c->nranks - 1 - p) * size);
  }
}

static void verify(void* vc, long size) {
  struct ctx* c = vc;
  char what[96];
  int p;
  set_layout(c, size);
  for (p = 0; p < c->nranks; p++) {
    osu_fill(c->sbuf + c->sdispls[p], size, coll_seed(size, c->rank, p));
    osu_poison(c->rbuf + c->rdispls[p], size, coll_seed(size, p, c->rank));
  }
  COLL_CHECK(MMPI_Alltoallv(c->sbuf, c->scounts, c->sdispls, MPI_CHAR, c->rbuf, c->rcounts,
                            c->rdispls, MPI_CHAR, MMPI_COMM_WORLD));
  for (p = 0; p < c->nranks; p++) {
    snprintf(what, sizeof what, "block received from rank %d (at displacement %d)", p,
             c->rdispls[p]);
    coll_verify_bytes(c->rbuf + c->rdispls[p], size, coll_seed(size, p, c->rank), c->rank, size,
                      what);
    snprintf(what, sizeof what, "send buffer block for rank %d modified by the collective", p);
    coll_verify_bytes(c->sbuf + c->sdispls[p], size, coll_seed(size, c->rank, p), c->rank, size,
                      what);
  }
}

static void op(void* vc, long size) {
  struct ctx* c = vc;
  (void)size; /* the layout of `size` was set by verify() */
  COLL_CHECK(MMPI_Alltoallv(c->sbuf, c->scounts, c->sdispls, MPI_CHAR, c->rbuf, c->rcounts,
                            c->rdispls, MPI_CHAR, MMPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  struct coll_opts o;
  struct ctx c;
  int rc;

  rc = coll_start(&argc, &argv, COLL_ALLTOALLV, &c.rank, &c.nranks, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  c.sbuf = coll_alloc((size_t)o.max_size * (size_t)c.nranks);
  c.rbuf = coll_alloc((size_t)o.max_size * (size_t)c.nranks);
  c.scounts = coll_alloc(sizeof(int) * (size_t)c.nranks);
  c.sdispls = coll_alloc(sizeof(int) * (size_t)c.nranks);
  c.rcounts = coll_alloc(sizeof(int) * (size_t)c.nranks);
  c.rdispls = coll_alloc(sizeof(int) * (size_t)c.nranks);
  coll_loop(COLL_ALLTOALLV, &o, c.rank, c.nranks, verify, op, &c);
  free(c.sbuf);
  free(c.rbuf);
  free(c.scounts);
  free(c.sdispls);
  free(c.rcounts);
  free(c.rdispls);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
