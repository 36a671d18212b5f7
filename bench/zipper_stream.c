/* zipper_stream — a verified stream from rank 0 (cluster A) to the last rank
 * (cluster B), for failover and striping measurements (zipper-bench failover).
 *
 *   zipper_stream [-m BYTES] [-n MESSAGES] [-W WINDOW] [-o TIMELINE.csv]
 *
 *   -p PAIRS: PAIRS streams at once, rank i to rank i+PAIRS (at layout P+P
 *   every pair crosses the clusters); default 1: rank 0 to the last rank.
 *
 * Each sender sends MESSAGES messages of BYTES bytes (default 4 MiB x 256), WINDOW
 * (default 8) in flight; every message carries its own pattern (osu_fill with
 * the message index as seed) and the receiver checks every byte of it. The
 * receiver writes one line per message to TIMELINE: index,unix_time_s (wall
 * clock, CLOCK_REALTIME, so a driver on the same host can put a kill on the
 * same axis), and prints `# zipper_stream: BYTES bytes in SECONDS s, MB/s,
 * longest gap GAP s`; rank 0 prints the aggregate of all pairs,
 * `# zipper_stream aggregate: PAIRS pairs, BYTES bytes in SECONDS s, MB/s`. A message that arrives
 * wrong ends the program with status 1 (never continue on wrong data); an MPI error ends it with
 * the error's class.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef MMPI_NATIVE
#include "mmpi_native.h"
#else
#include <mmpi.h>
#endif

#include "osu_util.h"

#define STREAM_TAG 4242

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "zipper_stream: %s failed with error code %d\n", what, rc);
    MMPI_Abort(MMPI_COMM_WORLD, rc);
  }
}

int main(int argc, char** argv) {
  long size = 4L << 20, messages = 256;
  int window = 8, pairs = 1, rank, nranks, c;
  const char* timeline = NULL;
  while ((c = getopt(argc, argv, "m:n:W:o:p:")) != -1) {
    if (c == 'm')
      size = atol(optarg);
    else if (c == 'n')
      messages = atol(optarg);
    else if (c == 'W')
      window = atoi(optarg);
    else if (c == 'o')
      timeline = optarg;
    else if (c == 'p')
      pairs = atoi(optarg);
    else {
      fprintf(stderr,
              "usage: zipper_stream [-m BYTES] [-n MESSAGES] [-W WINDOW] [-p PAIRS] [-o FILE]\n");
      return 2;
    }
  }
  if (size < 1 || size > (1L << 30) || messages < 1 || window < 1 || window > 1024) {
    fprintf(stderr, "zipper_stream: -m 1..1 GiB, -n >= 1, -W 1..1024\n");
    return 2;
  }
  check(MMPI_Init(&argc, &argv), "MMPI_Init");
  check(MMPI_Comm_rank(MMPI_COMM_WORLD, &rank), "MMPI_Comm_rank");
  check(MMPI_Comm_size(MMPI_COMM_WORLD, &nranks), "MMPI_Comm_size");
  if (pairs < 1 || 2 * pairs > nranks) {
    if (rank == 0)
      fprintf(stderr, "zipper_stream: -p %d needs at least %d ranks\n", pairs, 2 * pairs);
    MMPI_Finalize();
    return 2;
  }
  /* Senders are ranks 0..pairs-1; with one pair the receiver is the last
   * rank (in cluster B), otherwise rank i+pairs. */
  const int sender = rank < pairs;
  const int receiver_of = pairs == 1 ? (rank == nranks - 1 ? 0 : -1)
                                     : (rank >= pairs && rank < 2 * pairs ? rank - pairs : -1);
  const int peer = sender ? (pairs == 1 ? nranks - 1 : rank + pairs) : receiver_of;
  const int active = sender || receiver_of >= 0;
  unsigned char* pool = active ? malloc((size_t)size * window) : NULL;
  MPI_Request* req = calloc((size_t)window, sizeof *req);
  long* slot_msg = calloc((size_t)window, sizeof *slot_msg);
  double* done_at = active && !sender ? calloc((size_t)messages, sizeof *done_at) : NULL;
  if (active && (!pool || !req || !slot_msg || (!sender && !done_at))) {
    fprintf(stderr, "zipper_stream: out of memory\n");
    MMPI_Abort(MMPI_COMM_WORLD, 1);
  }
  check(MMPI_Barrier(MMPI_COMM_WORLD), "MMPI_Barrier");
  const double t0 = wall_now();
  if (active && nranks > 1) {
    long next = 0, finished = 0;
    int j;
    for (j = 0; j < window; j++) req[j] = MPI_REQUEST_NULL;
    while (finished < messages) {
      for (j = 0; j < window && next < messages; j++) {
        if (req[j] != MPI_REQUEST_NULL) continue;
        unsigned char* b = pool + (long)j * size;
        slot_msg[j] = next;
        if (sender) {
          osu_fill(b, size, (uint32_t)next);
          check(MMPI_Isend(b, (int)size, MPI_BYTE, peer, STREAM_TAG, MMPI_COMM_WORLD, &req[j]),
                "MMPI_Isend");
        } else {
          osu_poison(b, size, (uint32_t)next);
          check(MMPI_Irecv(b, (int)size, MPI_BYTE, peer, STREAM_TAG, MMPI_COMM_WORLD, &req[j]),
                "MMPI_Irecv");
        }
        ++next;
      }
      int idx;
      MPI_Status st;
      check(MMPI_Waitany(window, req, &idx, &st), "MMPI_Waitany");
      if (idx == MPI_UNDEFINED) continue;
      if (!sender) {
        const unsigned char* b = pool + (long)idx * size;
        long k;
        int count = -1;
        MMPI_Get_count(&st, MPI_BYTE, &count);
        for (k = 0; k < size; k++)
          if (b[k] != osu_byte((size_t)k, (uint32_t)slot_msg[idx])) break;
        if (count != size || k != size) {
          fprintf(stderr,
                  "zipper_stream: message %ld arrived wrong (count %d of %ld, first bad byte "
                  "%ld)\n",
                  slot_msg[idx], count, size, k);
          MMPI_Abort(MMPI_COMM_WORLD, 1);
        }
        done_at[slot_msg[idx]] = wall_now();
      }
      ++finished;
    }
  }
  check(MMPI_Barrier(MMPI_COMM_WORLD), "MMPI_Barrier");
  const double all_secs = wall_now() - t0;
  if (rank == 0) {
    printf("# zipper_stream aggregate: %d pairs, %ld bytes in %.3f s, %.1f MB/s\n", pairs,
           size * messages * pairs, all_secs, (double)size * messages * pairs / all_secs / 1e6);
    fflush(stdout);
  }
  if (done_at && (pairs == 1 || rank == 2 * pairs - 1)) {
    const double secs = all_secs;
    double gap = 0, prev = t0;
    long i;
    FILE* f = timeline ? fopen(timeline, "w") : NULL;
    if (timeline && !f) perror(timeline);
    if (f) fprintf(f, "message,unix_time_s\n");
    for (i = 0; i < messages; i++) {
      if (done_at[i] - prev > gap) gap = done_at[i] - prev;
      if (done_at[i] > prev) prev = done_at[i];
      if (f) fprintf(f, "%ld,%.6f\n", i, done_at[i]);
    }
    if (f) fclose(f);
    printf("# zipper_stream: %ld bytes in %.3f s, %.1f MB/s, longest gap %.3f s, start %.6f\n",
           size * messages, secs, (double)size * messages / secs / 1e6, gap, t0);
    fflush(stdout);
  }
  free(pool);
  free(req);
  free(slot_msg);
  free(done_at);
  return MMPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
