/* osu_bcast — OSU-style MMPI_Bcast latency (root 0, MPI_CHAR).
 *
 * Built against libmmpi (mmpi.h), or against plain MPI with -DMMPI_NATIVE.
 * Verification iteration: the root broadcasts a pattern derived from the
 * size, every other rank receives into a poisoned buffer and checks every
 * byte. See osu_coll.h for defaults, timing and output.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_coll.h"

#define ROOT 0

struct ctx {
  int rank;
  unsigned char* buf;
};

static void verify(void* vc, long size) {
  struct ctx* c = vc;
  uint32_t seed = coll_seed(size, ROOT, 0);
  if (c->rank == ROOT)
    osu_fill(c->buf, size, seed);
  else
    osu_poison(c->buf, size, seed);
  COLL_CHECK(MMPI_Bcast(c->buf, (int)size, MPI_CHAR, ROOT, MMPI_COMM_WORLD));
  coll_verify_bytes(
      c->buf, size, seed, c->rank, size,
      c->rank == ROOT ? "root's buffer after the broadcast" : "data broadcast from rank 0");
}

static void op(void* vc, long size) {
  struct ctx* c = vc;
  COLL_CHECK(MMPI_Bcast(c->buf, (int)size, MPI_CHAR, ROOT, MMPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  struct coll_opts o;
  struct ctx c;
  int nranks = 0, rc;

  rc = coll_start(&argc, &argv, COLL_BCAST, &c.rank, &nranks, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  c.buf = coll_alloc((size_t)o.max_size);
  coll_loop(COLL_BCAST, &o, c.rank, nranks, verify, op, &c);
  free(c.buf);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
