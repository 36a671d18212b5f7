/* mmpi_failover_itest — traffic both ways across the clusters, every byte
 * checked, while a test kills, stops or drains one of k forwarders
 * (tests/integration/failover_itest.sh).
 *
 *   mmpi_failover_itest ROUNDS
 *
 * Rank r of cluster A pairs with rank r of cluster B (ranks beyond the
 * smaller cluster pair with rank 0 of the other). Each round every pair
 * exchanges one message each way, sizes cycling from 0 B to 4 MiB (eager and
 * rendezvous), each with a pattern seeded by (sender, round); then three
 * messages with one tag whose order is checked; every 8th round rank 0 of A
 * receives from MPI_ANY_SOURCE. A wrong byte, a duplicate or a lost message
 * ends the program with status 1; an MPI error with its class. Prints
 * "PASS failover (ROUNDS rounds, BYTES bytes checked)" at rank 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmpi.h"

static const size_t kSizes[] = {0, 8, 1000, 16384, 20000, 262144, 1 << 20, 4 << 20};
#define NSIZES (sizeof kSizes / sizeof kSizes[0])

static void fill(unsigned char* b, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    b[i] = (unsigned char)(x >> 16);
  }
}

static void fail(int rank, const char* what, int round, int peer) {
  fprintf(stderr, "FAIL failover: rank %d round %d peer %d: %s\n", rank, round, peer, what);
  MMPI_Abort(MMPI_COMM_WORLD, 1);
}

static void check_rc(int rc, int rank, const char* what, int round) {
  if (rc == MPI_SUCCESS) return;
  int cls = 0;
  MMPI_Error_class(rc, &cls);
  fprintf(stderr, "FAIL failover: rank %d round %d: %s returned error class %d\n", rank, round,
          what, cls);
  MMPI_Abort(MMPI_COMM_WORLD, cls ? cls : 1);
}

int main(int argc, char** argv) {
  MMPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rounds = argc > 1 ? atoi(argv[1]) : 200;
  const int x = atoi(getenv("MMPI_NP_LOW") ? getenv("MMPI_NP_LOW") : "1");
  const int y = size - x;
  const int in_a = rank < x;
  const int mine = in_a ? rank : rank - x;
  const int peer = in_a ? x + (mine < y ? mine : 0) : (mine < x ? mine : 0);
  /* Who sends to me: every rank of the other cluster whose peer I am. */
  int senders[4096], nsenders = 0;
  for (int r = in_a ? x : 0; r < (in_a ? size : x); ++r) {
    const int m = in_a ? r - x : r;
    const int p = in_a ? (m < x ? m : 0) : x + (m < y ? m : 0);
    if (p == rank && nsenders < 4096) senders[nsenders++] = r;
  }
  unsigned char* out = malloc(kSizes[NSIZES - 1]);
  unsigned char* in = malloc(kSizes[NSIZES - 1]);
  unsigned char* want = malloc(kSizes[NSIZES - 1]);
  if (!out || !in || !want) fail(rank, "out of memory", 0, peer);
  unsigned long long checked = 0;
  static int next_v[4096];
  for (int b = 0; b < 4096; ++b) next_v[b] = 7;
  if (rank == 0) {
    printf("# failover: %d rounds begin\n", rounds);
    fflush(stdout);
  }
  for (int round = 0; round < rounds; ++round) {
    const size_t n = kSizes[(size_t)round % NSIZES];
    fill(out, n, (uint32_t)(rank * 100003 + round));
    MPI_Request sreq;
    check_rc(MMPI_Isend(out, (int)n, MPI_BYTE, peer, 1, MMPI_COMM_WORLD, &sreq), rank, "Isend",
             round);
    for (int s = 0; s < nsenders; ++s) {
      MPI_Status st;
      memset(in, 0xEE, n);
      check_rc(MMPI_Recv(in, (int)n, MPI_BYTE, senders[s], 1, MMPI_COMM_WORLD, &st), rank, "Recv",
               round);
      int got = -1;
      MMPI_Get_count(&st, MPI_BYTE, &got);
      if ((size_t)got != n) fail(rank, "wrong length", round, senders[s]);
      fill(want, n, (uint32_t)(senders[s] * 100003 + round));
      if (memcmp(in, want, n) != 0) fail(rank, "wrong bytes", round, senders[s]);
      checked += n;
    }
    check_rc(MMPI_Wait(&sreq, MPI_STATUS_IGNORE), rank, "Wait", round);
    /* Order: three messages with one tag arrive as sent. */
    int seqs[3] = {round * 3, round * 3 + 1, round * 3 + 2};
    MPI_Request o[3];
    for (int i = 0; i < 3; ++i)
      check_rc(MMPI_Isend(&seqs[i], 1, MPI_INT, peer, 2, MMPI_COMM_WORLD, &o[i]), rank, "Isend",
               round);
    for (int s = 0; s < nsenders; ++s)
      for (int i = 0; i < 3; ++i) {
        int v = -1;
        check_rc(MMPI_Recv(&v, 1, MPI_INT, senders[s], 2, MMPI_COMM_WORLD, MPI_STATUS_IGNORE), rank,
                 "Recv", round);
        if (v != round * 3 + i) fail(rank, "order violated (or a duplicate)", round, senders[s]);
      }
    check_rc(MMPI_Waitall(3, o, MPI_STATUSES_IGNORE), rank, "Waitall", round);
    if (round % 8 == 7) {
      /* MPI_ANY_SOURCE at rank 0: one message from every rank of cluster B. */
      int v = round;
      if (rank >= x) {
        check_rc(MMPI_Send(&v, 1, MPI_INT, 0, 3, MMPI_COMM_WORLD), rank, "Send", round);
      } else if (rank == 0) {
        /* A sender may be rounds ahead (it waits for no one here): per
         * source the values come in order, each once. */
        for (int i = 0; i < y; ++i) {
          MPI_Status st;
          check_rc(MMPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, MMPI_COMM_WORLD, &st), rank, "Recv",
                   round);
          const int b = st.MPI_SOURCE - x;
          if (b < 0 || b >= 4096 || v != next_v[b])
            fail(rank, "ANY_SOURCE: a message out of order, lost or duplicated", round,
                 st.MPI_SOURCE);
          next_v[b] += 8;
        }
      }
    }
  }
  if (rank == 0)
    for (int b = 0; b < y && b < 4096; ++b)
      if (next_v[b] != 7 + 8 * (rounds / 8))
        fail(rank, "ANY_SOURCE: messages missing", rounds, x + b);
  unsigned long long total = 0;
  MMPI_Reduce(&checked, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD);
  if (rank == 0) printf("PASS failover (%d rounds, %llu bytes checked)\n", rounds, total);
  free(out);
  free(in);
  free(want);
  MMPI_Finalize();
  return 0;
}
