/* osu_bw — OSU-style unidirectional bandwidth from rank 0 to rank 1.
 *
 * Per iteration rank 0 posts a window of MMPI_Isend (default 64) and waits for
 * all of them, rank 1 posts the matching MMPI_Irecv and answers with a 4-byte
 * ack once all arrived. Reports MB/s with MB = 1e6 bytes, like OSU. Built
 * against libmmpi (mmpi.h), or against plain MPI with -DMMPI_NATIVE. See
 * osu_p2p.h for the defaults and for how the data are verified.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_p2p.h"

#define ACK_BYTES 4

/* Untimed iteration 0: every window slot gets its own pattern and buffer;
 * slots are sent in batches of per_batch to bound the memory. */
static void verify_iteration(int rank, long size, int window, int per_batch, unsigned char* pool,
                             MPI_Request* req, MPI_Status* st, unsigned char* ack) {
  long stride = size > 0 ? size : 1;
  int n = (int)size, base, j, cnt;
  MPI_Status ack_st;

  for (base = 0; base < window; base += per_batch) {
    cnt = window - base < per_batch ? window - base : per_batch;
    for (j = 0; j < cnt; j++) {
      unsigned char* b = pool + (long)j * stride;
      if (rank == 0) {
        osu_fill(b, size, p2p_seed(size, 0, 0, base + j));
        P2P_CHECK(MMPI_Isend(b, n, MPI_CHAR, 1, P2P_TAG_BW, MMPI_COMM_WORLD, &req[j]));
      } else {
        osu_poison(b, size, p2p_seed(size, 0, 0, base + j));
        P2P_CHECK(MMPI_Irecv(b, n, MPI_CHAR, 0, P2P_TAG_BW, MMPI_COMM_WORLD, &req[j]));
      }
    }
    P2P_CHECK(MMPI_Waitall(cnt, req, rank == 0 ? MPI_STATUSES_IGNORE : st));
    if (rank == 1)
      for (j = 0; j < cnt; j++)
        p2p_verify(pool + (long)j * stride, size, &st[j], "data message", rank, size, 0, base + j,
                   0);
  }
  /* the ack (slot number "window" in the pattern) is verified too */
  if (rank == 0) {
    osu_poison(ack, ACK_BYTES, p2p_seed(size, 0, 1, window));
    P2P_CHECK(MMPI_Recv(ack, ACK_BYTES, MPI_CHAR, 1, P2P_TAG_ACK, MMPI_COMM_WORLD, &ack_st));
    p2p_verify(ack, ACK_BYTES, &ack_st, "ack", rank, size, 0, window, 1);
  } else {
    osu_fill(ack, ACK_BYTES, p2p_seed(size, 0, 1, window));
    P2P_CHECK(MMPI_Send(ack, ACK_BYTES, MPI_CHAR, 0, P2P_TAG_ACK, MMPI_COMM_WORLD));
  }
}

int main(int argc, char** argv) {
  struct p2p_opts o;
  int rank = 0, rc;
  long size, pool_bytes;
  unsigned char *s_buf, *r_buf, *pool, ack[ACK_BYTES];
  MPI_Request* req;
  MPI_Status* st;

  rc = p2p_start(&argc, &argv, P2P_BW, &rank, &o);
  if (rc >= 0) {
    MMPI_Finalize();
    return rc;
  }
  if (rank > 1) { /* idle: no barrier, straight to finalize */
    MMPI_Finalize();
    return EXIT_SUCCESS;
  }

  s_buf = p2p_alloc((size_t)o.max_size);
  r_buf = p2p_alloc((size_t)o.max_size);
  pool_bytes = o.max_size > P2P_VERIFY_POOL_BYTES ? o.max_size : P2P_VERIFY_POOL_BYTES;
  if (pool_bytes > (long)o.window * (o.max_size > 0 ? o.max_size : 1))
    pool_bytes = (long)o.window * (o.max_size > 0 ? o.max_size : 1);
  pool = p2p_alloc((size_t)pool_bytes);
  req = p2p_alloc(sizeof(MPI_Request) * (size_t)o.window);
  st = p2p_alloc(sizeof(MPI_Status) * (size_t)o.window);

  if (rank == 0) p2p_header("Bandwidth", "Bandwidth (MB/s)");

  for (size = o.min_size; size <= o.max_size; size = p2p_next_size(size)) {
    int iters, skip, i, j, n = (int)size;
    long per_batch = pool_bytes / (size > 0 ? size : 1);
    double t_start = 0.0, t_end = 0.0;

    if (per_batch > o.window) per_batch = o.window;
    p2p_iters_for(&o, size, &iters, &skip);

    p2p_sync(rank);
    verify_iteration(rank, size, o.window, (int)per_batch, pool, req, st, ack);
    p2p_sync(rank);

    for (i = 0; i < iters + skip; i++) {
      if (i == skip) t_start = MMPI_Wtime();
      if (rank == 0) {
        for (j = 0; j < o.window; j++)
          P2P_CHECK(MMPI_Isend(s_buf, n, MPI_CHAR, 1, P2P_TAG_BW, MMPI_COMM_WORLD, &req[j]));
        P2P_CHECK(MMPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
        P2P_CHECK(MMPI_Recv(ack, ACK_BYTES, MPI_CHAR, 1, P2P_TAG_ACK, MMPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
      } else {
        /* all slots share r_buf, as in OSU */
        for (j = 0; j < o.window; j++)
          P2P_CHECK(MMPI_Irecv(r_buf, n, MPI_CHAR, 0, P2P_TAG_BW, MMPI_COMM_WORLD, &req[j]));
        P2P_CHECK(MMPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
        P2P_CHECK(MMPI_Send(ack, ACK_BYTES, MPI_CHAR, 0, P2P_TAG_ACK, MMPI_COMM_WORLD));
      }
    }
    t_end = MMPI_Wtime();

    if (rank == 0) p2p_row(size, (double)size / 1e6 * iters * o.window / (t_end - t_start));
  }

  free(st);
  free(req);
  free(pool);
  free(s_buf);
  free(r_buf);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
