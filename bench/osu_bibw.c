/* osu_bibw — OSU-style bidirectional bandwidth between ranks 0 and 1.
 *
 * Per iteration both ranks post a window (default 64) of MMPI_Irecv, then a
 * window of MMPI_Isend, and wait for all of them. Reports the total MB/s of
 * both directions (MB = 1e6 bytes), timed on rank 0, like OSU. Built against
 * libmmpi (mmpi.h), or against plain MPI with -DMMPI_NATIVE. See osu_p2p.h
 * for the defaults and for how the data are verified.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_p2p.h"

/* Untimed iteration 0: every window slot of each direction gets its own
 * pattern and buffer; slots go in batches of per_batch to bound memory. */
static void verify_iteration(int rank, long size, int window, int per_batch, unsigned char* spool,
                             unsigned char* rpool, MPI_Request* sreq, MPI_Request* rreq,
                             MPI_Status* st) {
  long stride = size > 0 ? size : 1;
  int n = (int)size, base, j, cnt;
  int peer = 1 - rank;
  int stag = rank == 0 ? P2P_TAG_BIBW_0TO1 : P2P_TAG_BIBW_1TO0;
  int rtag = rank == 0 ? P2P_TAG_BIBW_1TO0 : P2P_TAG_BIBW_0TO1;

  for (base = 0; base < window; base += per_batch) {
    cnt = window - base < per_batch ? window - base : per_batch;
    for (j = 0; j < cnt; j++) {
      unsigned char* b = rpool + (long)j * stride;
      osu_poison(b, size, p2p_seed(size, 0, peer, base + j));
      P2P_CHECK(MMPI_Irecv(b, n, MPI_CHAR, peer, rtag, MMPI_COMM_WORLD, &rreq[j]));
    }
    for (j = 0; j < cnt; j++) {
      unsigned char* b = spool + (long)j * stride;
      osu_fill(b, size, p2p_seed(size, 0, rank, base + j));
      P2P_CHECK(MMPI_Isend(b, n, MPI_CHAR, peer, stag, MMPI_COMM_WORLD, &sreq[j]));
    }
    P2P_CHECK(MMPI_Waitall(cnt, sreq, MPI_STATUSES_IGNORE));
    P2P_CHECK(MMPI_Waitall(cnt, rreq, st));
    for (j = 0; j < cnt; j++)
      p2p_verify(rpool + (long)j * stride, size, &st[j], "data message", rank, size, 0, base + j,
                 peer);
  }
}

int main(int argc, char** argv) {
  struct p2p_opts o;
  int rank = 0, rc, peer, stag, rtag;
  long size, pool_bytes;
  unsigned char *s_buf, *r_buf, *spool, *rpool;
  MPI_Request *sreq, *rreq;
  MPI_Status* st;

  rc = p2p_start(&argc, &argv, P2P_BIBW, &rank, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  if (rank > 1) { /* idle: no barrier, straight to finalize */
    MMPI_Finalize();
    return EXIT_SUCCESS;
  }
  peer = 1 - rank;
  stag = rank == 0 ? P2P_TAG_BIBW_0TO1 : P2P_TAG_BIBW_1TO0;
  rtag = rank == 0 ? P2P_TAG_BIBW_1TO0 : P2P_TAG_BIBW_0TO1;

  s_buf = p2p_alloc((size_t)o.max_size);
  r_buf = p2p_alloc((size_t)o.max_size);
  pool_bytes = o.max_size > P2P_VERIFY_POOL_BYTES ? o.max_size : P2P_VERIFY_POOL_BYTES;
  if (pool_bytes > (long)o.window * (o.max_size > 0 ? o.max_size : 1))
    pool_bytes = (long)o.window * (o.max_size > 0 ? o.max_size : 1);
  spool = p2p_alloc((size_t)pool_bytes);
  rpool = p2p_alloc((size_t)pool_bytes);
  sreq = p2p_alloc(sizeof(MPI_Request) * (size_t)o.window);
  rreq = p2p_alloc(sizeof(MPI_Request) * (size_t)o.window);
  st = p2p_alloc(sizeof(MPI_Status) * (size_t)o.window);

  if (rank == 0) p2p_header("Bi-Directional Bandwidth", "Bandwidth (MB/s)");

  for (size = o.min_size; size <= o.max_size; size = p2p_next_size(size)) {
    int iters, skip, i, j, n = (int)size;
    long per_batch = pool_bytes / (size > 0 ? size : 1);
    double t_start = 0.0, t_end = 0.0;

    if (per_batch > o.window) per_batch = o.window;
    p2p_iters_for(&o, size, &iters, &skip);

    p2p_sync(rank);
    verify_iteration(rank, size, o.window, (int)per_batch, spool, rpool, sreq, rreq, st);
    p2p_sync(rank);

    for (i = 0; i < iters + skip; i++) {
      if (i == skip) t_start = MMPI_Wtime();
      /* all slots share r_buf, as in OSU */
      for (j = 0; j < o.window; j++)
        P2P_CHECK(MMPI_Irecv(r_buf, n, MPI_CHAR, peer, rtag, MMPI_COMM_WORLD, &rreq[j]));
      for (j = 0; j < o.window; j++)
        P2P_CHECK(MMPI_Isend(s_buf, n, MPI_CHAR, peer, stag, MMPI_COMM_WORLD, &sreq[j]));
      P2P_CHECK(MMPI_Waitall(o.window, sreq, MPI_STATUSES_IGNORE));
      P2P_CHECK(MMPI_Waitall(o.window, rreq, MPI_STATUSES_IGNORE));
    }
    t_end = MMPI_Wtime();

    if (rank == 0) p2p_row(size, (double)size / 1e6 * iters * o.window * 2.0 / (t_end - t_start));
  }

  free(st);
  free(rreq);
  free(sreq);
  free(rpool);
  free(spool);
  free(s_buf);
  free(r_buf);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
