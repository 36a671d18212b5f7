/* A job whose traffic through zipperd is known exactly, for checking
 * zipperctl's and /metrics' counters. Layout 1+1: rank 0 (cluster A, low
 * group) sends EAGER_MSGS messages of EAGER_BYTES and one of BIG_BYTES
 * (rendezvous) to rank 1; rank 1 answers REPLY_MSGS of REPLY_BYTES. Every
 * payload is verified. Rank 0 prints
 *   EXPECT low_to_high_bytes B low_to_high_frames F high_to_low_bytes B2 high_to_low_frames F2
 * where frames count what zipperd relays: an eager message is one frame; a
 * rendezvous message is an RTS plus its chunks one way and a CTS the other
 * way (protocol: client/engine.cpp; chunk sizes: client/chunking.h). */
#include <mmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EAGER_MSGS = 100, EAGER_BYTES = 1000, REPLY_MSGS = 10, REPLY_BYTES = 500 };
#define BIG_BYTES (1u << 20)

static void fill(unsigned char* b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) b[i] = (unsigned char)(seed * 31u + i * 7u);
}
static int check(const unsigned char* b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i)
    if (b[i] != (unsigned char)(seed * 31u + i * 7u)) return 0;
  return 1;
}

int main(int argc, char** argv) {
  int rank, size, ok = 1;
  MMPI_Init(&argc, &argv);
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "mmpi_bytes: run with -x 1 -y 1\n");
    MMPI_Abort(MMPI_COMM_WORLD, 2);
  }
  unsigned char* buf = malloc(BIG_BYTES);
  if (rank == 0) {
    for (unsigned i = 0; i < EAGER_MSGS; ++i) {
      fill(buf, EAGER_BYTES, i);
      MMPI_Send(buf, EAGER_BYTES, MPI_BYTE, 1, 1, MMPI_COMM_WORLD);
    }
    fill(buf, BIG_BYTES, 999);
    MMPI_Send(buf, BIG_BYTES, MPI_BYTE, 1, 2, MMPI_COMM_WORLD);
    for (unsigned i = 0; i < REPLY_MSGS; ++i) {
      MMPI_Recv(buf, REPLY_BYTES, MPI_BYTE, 1, 3, MMPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ok &= check(buf, REPLY_BYTES, 500 + i);
    }
  } else {
    for (unsigned i = 0; i < EAGER_MSGS; ++i) {
      MMPI_Recv(buf, EAGER_BYTES, MPI_BYTE, 0, 1, MMPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ok &= check(buf, EAGER_BYTES, i);
    }
    MMPI_Recv(buf, BIG_BYTES, MPI_BYTE, 0, 2, MMPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok &= check(buf, BIG_BYTES, 999);
    for (unsigned i = 0; i < REPLY_MSGS; ++i) {
      fill(buf, REPLY_BYTES, 500 + i);
      MMPI_Send(buf, REPLY_BYTES, MPI_BYTE, 0, 3, MMPI_COMM_WORLD);
    }
  }
  /* Rank 1's verdict travels as one more eager message: 4 bytes high to low. */
  int peer_ok = 1;
  if (rank == 1) MMPI_Send(&ok, 1, MPI_INT, 0, 4, MMPI_COMM_WORLD);
  else MMPI_Recv(&peer_ok, 1, MPI_INT, 1, 4, MMPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0) {
    const char* env = getenv("MMPI_CHUNK_SIZE");
    const unsigned long max_chunk = env ? strtoul(env, NULL, 10) : 131072ul;
    /* client/chunking.h rendezvous_chunk(): the power of two from 16 KiB up
     * that is at least an eighth of the message, at most MMPI_CHUNK_SIZE. */
    unsigned long chunk = 16384;
    while (chunk < max_chunk && chunk * 8 < BIG_BYTES) chunk *= 2;
    if (chunk > max_chunk) chunk = max_chunk;
    const unsigned long chunks = (BIG_BYTES + chunk - 1) / chunk;
    printf("EXPECT low_to_high_bytes %lu low_to_high_frames %lu high_to_low_bytes %lu "
           "high_to_low_frames %lu\n",
           (unsigned long)EAGER_MSGS * EAGER_BYTES + BIG_BYTES, EAGER_MSGS + 1 + chunks,
           (unsigned long)REPLY_MSGS * REPLY_BYTES + sizeof(int), REPLY_MSGS + 1ul + 1ul);
    printf(ok && peer_ok ? "PASS bytes\n" : "FAIL bytes: payload mismatch\n");
  }
  free(buf);
  MMPI_Finalize();
  return ok && peer_ok ? 0 : 1;
}
