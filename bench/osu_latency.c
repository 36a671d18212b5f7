/* osu_latency — OSU-style ping-pong latency between ranks 0 and 1.
 *
 * Reports half the round-trip time in microseconds per message size, in the
 * OSU micro-benchmarks' table format. Built against libmmpi (mmpi.h), or
 * against plain MPI with -DMMPI_NATIVE. See osu_p2p.h for the defaults and
 * for how the data are verified.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_p2p.h"

static void verify_iteration(int rank, long size, unsigned char* s_buf, unsigned char* r_buf) {
  MPI_Status st;
  int n = (int)size;
  if (rank == 0) {
    osu_fill(s_buf, size, p2p_seed(size, 0, 0, 0));
    osu_poison(r_buf, size, p2p_seed(size, 0, 1, 0));
    P2P_CHECK(MMPI_Send(s_buf, n, MPI_CHAR, 1, P2P_TAG_LAT, MMPI_COMM_WORLD));
    P2P_CHECK(MMPI_Recv(r_buf, n, MPI_CHAR, 1, P2P_TAG_LAT, MMPI_COMM_WORLD, &st));
    p2p_verify(r_buf, size, &st, "reply", rank, size, 0, 0, 1);
  } else {
    osu_poison(r_buf, size, p2p_seed(size, 0, 0, 0));
    P2P_CHECK(MMPI_Recv(r_buf, n, MPI_CHAR, 0, P2P_TAG_LAT, MMPI_COMM_WORLD, &st));
    p2p_verify(r_buf, size, &st, "ping", rank, size, 0, 0, 0);
    osu_fill(s_buf, size, p2p_seed(size, 0, 1, 0));
    P2P_CHECK(MMPI_Send(s_buf, n, MPI_CHAR, 0, P2P_TAG_LAT, MMPI_COMM_WORLD));
  }
}

int main(int argc, char** argv) {
  struct p2p_opts o;
  int rank = 0, rc;
  long size;
  unsigned char *s_buf, *r_buf;

  rc = p2p_start(&argc, &argv, P2P_LATENCY, &rank, &o);
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

  if (rank == 0) p2p_header("Latency", "Latency (us)");

  for (size = o.min_size; size <= o.max_size; size = p2p_next_size(size)) {
    int iters, skip, i, n = (int)size;
    double t_start = 0.0, t_end = 0.0;

    p2p_iters_for(&o, size, &iters, &skip);

    p2p_sync(rank);
    verify_iteration(rank, size, s_buf, r_buf);
    p2p_sync(rank);

    for (i = 0; i < iters + skip; i++) {
      if (i == skip) t_start = MMPI_Wtime();
      if (rank == 0) {
        P2P_CHECK(MMPI_Send(s_buf, n, MPI_CHAR, 1, P2P_TAG_LAT, MMPI_COMM_WORLD));
        P2P_CHECK(
            MMPI_Recv(r_buf, n, MPI_CHAR, 1, P2P_TAG_LAT, MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
      } else {
        P2P_CHECK(
            MMPI_Recv(r_buf, n, MPI_CHAR, 0, P2P_TAG_LAT, MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
        P2P_CHECK(MMPI_Send(s_buf, n, MPI_CHAR, 0, P2P_TAG_LAT, MMPI_COMM_WORLD));
      }
    }
    t_end = MMPI_Wtime();

    if (rank == 0) p2p_row(size, (t_end - t_start) * 1e6 / (2.0 * iters));
  }

  free(s_buf);
  free(r_buf);
  MMPI_Finalize();
  return EXIT_SUCCESS;
}
