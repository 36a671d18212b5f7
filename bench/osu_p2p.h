/* osu_p2p.h — shared helpers of the OSU-style point-to-point benchmarks
 * (osu_latency.c, osu_bw.c, osu_bibw.c).
 *
 * Defaults follow the OSU micro-benchmarks (osu_util.h): sizes 1 B .. 4 MiB
 * in powers of two, messages larger than 8 KiB use the "large" iteration and
 * warm-up counts, window 64 for the bandwidth tests. Output rows use OSU's
 * "%-10d%18.2f" layout so existing OSU parsers read them unchanged.
 *
 * Differences from OSU, on purpose:
 *   - p2p_sync() is a zero-byte ping-pong between ranks 0 and 1 wherever
 *     OSU calls MPI_Barrier, so that these benchmarks measure point-to-point
 *     only and never depend on the collectives; ranks >= 2 do not take part
 *     at all and go straight to MMPI_Finalize;
 *   - before the warm-up of every size one extra, untimed "verification
 *     iteration" (iteration 0) is run: every message of it carries a fill
 *     pattern derived from (size, iteration, sender, window slot), goes into
 *     its own buffer, and is checked byte by byte together with the status
 *     (source, count). A mismatch aborts the job with a clear message: the
 *     benchmarks never silently time corrupted transfers.
 *
 * Only the functions of mmpi.h are used. Build with -DMMPI_NATIVE to map
 * them onto plain MPI (mmpi_native.h).
 */
#ifndef ZIPPER_BENCH_OSU_P2P_H
#define ZIPPER_BENCH_OSU_P2P_H

#ifdef MMPI_NATIVE
#include "mmpi_native.h"
#else
#include <mmpi.h>
#define MMPI_VARIANT "MMPI"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osu_util.h"

/* OSU defaults (osu_util.h) */
#define P2P_MIN_MSG_SIZE_DEFAULT 1L
#define P2P_MAX_MSG_SIZE_DEFAULT (1L << 22) /* 4 MiB */
#define P2P_MAX_MSG_SIZE_LIMIT (1L << 30)   /* counts are int */
#define P2P_LARGE_MESSAGE_SIZE 8192L
#define P2P_LAT_LOOP_SMALL 10000
#define P2P_LAT_SKIP_SMALL 100
#define P2P_LAT_LOOP_LARGE 1000
#define P2P_LAT_SKIP_LARGE 10
#define P2P_BW_LOOP_SMALL 100
#define P2P_BW_SKIP_SMALL 10
#define P2P_BW_LOOP_LARGE 20
#define P2P_BW_SKIP_LARGE 2
#define P2P_WINDOW_SIZE_DEFAULT 64
#define P2P_WINDOW_SIZE_LIMIT 4096
#define P2P_FIELD_WIDTH 18
#define P2P_FLOAT_PRECISION 2

/* Tags. OSU's own where it has them. */
#define P2P_TAG_SYNC 990
#define P2P_TAG_LAT 1
#define P2P_TAG_BW 100
#define P2P_TAG_ACK 101
#define P2P_TAG_BIBW_0TO1 100
#define P2P_TAG_BIBW_1TO0 10

/* Memory the verification iteration may use for distinct per-slot buffers
 * (per direction). Windows that do not fit are verified in batches. */
#define P2P_VERIFY_POOL_BYTES (16L << 20)

#define P2P_CHECK(call)                                                                   \
  do {                                                                                    \
    int p2p_rc_ = (call);                                                                 \
    if (p2p_rc_ != MPI_SUCCESS) {                                                         \
      fprintf(stderr, "%s:%d: %s failed with error code %d\n", __FILE__, __LINE__, #call, \
              p2p_rc_);                                                                   \
      fflush(stderr);                                                                     \
      MMPI_Abort(MMPI_COMM_WORLD, 2);                                                     \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

enum p2p_kind { P2P_LATENCY, P2P_BW, P2P_BIBW };

struct p2p_opts {
  long min_size;
  long max_size;
  int iters;
  int iters_large;
  int skip;
  int skip_large;
  int window;
};

static const char* p2p_prog = "osu";

static void p2p_usage(FILE* f, enum p2p_kind kind) {
  int lat = kind == P2P_LATENCY;
  fprintf(f,
          "Usage: %s [options]   (run with at least 2 ranks; ranks 0 and 1 measure)\n"
          "  -m, --message-size [MIN:]MAX  message sizes, powers of two from MIN to MAX\n"
          "                                (default %ld:%ld)\n"
          "  -i, --iterations ITER         timed iterations per size\n"
          "                                (default %d, %d above %ld bytes)\n"
          "  -x, --warmup WARMUP           untimed warm-up iterations per size\n"
          "                                (default %d, %d above %ld bytes)\n",
          p2p_prog, P2P_MIN_MSG_SIZE_DEFAULT, P2P_MAX_MSG_SIZE_DEFAULT,
          lat ? P2P_LAT_LOOP_SMALL : P2P_BW_LOOP_SMALL,
          lat ? P2P_LAT_LOOP_LARGE : P2P_BW_LOOP_LARGE, P2P_LARGE_MESSAGE_SIZE,
          lat ? P2P_LAT_SKIP_SMALL : P2P_BW_SKIP_SMALL,
          lat ? P2P_LAT_SKIP_LARGE : P2P_BW_SKIP_LARGE, P2P_LARGE_MESSAGE_SIZE);
  if (!lat)
    fprintf(f, "  -W, --window-size WINDOW      messages in flight per iteration (default %d)\n",
            P2P_WINDOW_SIZE_DEFAULT);
  fprintf(f,
          "  -h, --help                    show this help\n"
          "Every size first runs one untimed iteration whose data is verified byte by\n"
          "byte; a mismatch aborts the run.\n");
}

/* OSU's -m syntax: "MAX", "MIN:MAX" or "MIN:". */
static int p2p_parse_sizes(const char* arg, struct p2p_opts* o) {
  return osu_parse_sizes(arg, P2P_MAX_MSG_SIZE_LIMIT, &o->min_size, &o->max_size);
}

/* Returns 0 to run, 1 when --help was shown, -1 on a usage error. Every rank
 * parses the same argv; only rank 0 prints. */
static int p2p_parse(int argc, char** argv, enum p2p_kind kind, int rank, struct p2p_opts* o) {
  static const struct osu_option opts[] = {
      {'h', 'h', "--help", 0},   {'m', 'm', "--message-size", 1}, {'i', 'i', "--iterations", 1},
      {'x', 'x', "--warmup", 1}, {'W', 'W', "--window-size", 1},  {0, 0, NULL, 0}};
  int lat = kind == P2P_LATENCY;
  int opt;
  struct osu_args args;
  const char *bad = NULL, *badval = NULL, *val = NULL;

  p2p_prog = osu_prog_name(argc, argv, p2p_prog);
  o->min_size = P2P_MIN_MSG_SIZE_DEFAULT;
  o->max_size = P2P_MAX_MSG_SIZE_DEFAULT;
  o->iters = lat ? P2P_LAT_LOOP_SMALL : P2P_BW_LOOP_SMALL;
  o->iters_large = lat ? P2P_LAT_LOOP_LARGE : P2P_BW_LOOP_LARGE;
  o->skip = lat ? P2P_LAT_SKIP_SMALL : P2P_BW_SKIP_SMALL;
  o->skip_large = lat ? P2P_LAT_SKIP_LARGE : P2P_BW_SKIP_LARGE;
  o->window = P2P_WINDOW_SIZE_DEFAULT;

  osu_args_init(&args, argc, argv);
  while (bad == NULL && (opt = osu_next_option(&args, opts, &val, &bad)) != 0) {
    long v;
    if (opt == 'W' && lat) bad = "unknown option"; /* latency has no window */
    if (bad != NULL) {
      badval = args.word;
      break;
    }
    switch (opt) {
      case 'h':
        if (rank == 0) p2p_usage(stdout, kind);
        return 1;
      case 'm':
        if (p2p_parse_sizes(val, o)) {
          bad = "bad message sizes (want [MIN:]MAX, 0 <= MIN <= MAX <= 2^30)";
          badval = val;
        }
        break;
      case 'i':
        /* like OSU's set_num_iterations(): one value for small and large */
        if (osu_parse_long(val, 1, INT_MAX, &v)) {
          bad = "bad iteration count (want >= 1)";
          badval = val;
        } else {
          o->iters = o->iters_large = (int)v;
        }
        break;
      case 'x':
        if (osu_parse_long(val, 0, INT_MAX, &v)) {
          bad = "bad warm-up count (want >= 0)";
          badval = val;
        } else {
          o->skip = o->skip_large = (int)v;
        }
        break;
      case 'W':
        if (osu_parse_long(val, 1, P2P_WINDOW_SIZE_LIMIT, &v)) {
          bad = "bad window size (want 1..4096)";
          badval = val;
        } else {
          o->window = (int)v;
        }
        break;
    }
  }
  if (bad != NULL) {
    if (rank == 0) {
      fprintf(stderr, "%s: %s: %s\n", p2p_prog, bad, badval ? badval : "");
      p2p_usage(stderr, kind);
    }
    return -1;
  }
  return 0;
}

static void p2p_iters_for(const struct p2p_opts* o, long size, int* iters, int* skip) {
  if (size > P2P_LARGE_MESSAGE_SIZE) {
    *iters = o->iters_large;
    *skip = o->skip_large;
  } else {
    *iters = o->iters;
    *skip = o->skip;
  }
}

static long p2p_next_size(long size) { return size ? size * 2 : 1; }

static void* p2p_alloc(size_t bytes) { return osu_alloc(bytes, p2p_prog); }

/* ---- fill pattern ------------------------------------------------------ */

static uint32_t p2p_seed(long size, int iter, int sender, int slot) {
  return osu_seed4((uint32_t)size, (uint32_t)iter, (uint32_t)sender, (uint32_t)slot);
}

static void p2p_fail(const char* what, const char* msg, int rank, long size, int iter, int slot,
                     int sender) {
  fprintf(stderr,
          "%s: DATA VERIFICATION FAILED on rank %d: %s: %s (message size %ld bytes, "
          "iteration %d, window slot %d, sent by rank %d). Aborting: the transport "
          "corrupts or loses data, its timings would be meaningless.\n",
          p2p_prog, rank, msg, what, size, iter, slot, sender);
  fflush(stderr);
  MMPI_Abort(MMPI_COMM_WORLD, 3);
  exit(3);
}

/* Check one received message of len bytes: status (source, byte count) and
 * contents against the pattern of (size, iter, sender, slot). msg names the
 * message in the error ("data message", "ack"). */
static void p2p_verify(const unsigned char* buf, long len, const MPI_Status* st, const char* msg,
                       int rank, long size, int iter, int slot, int sender) {
  uint32_t seed = p2p_seed(size, iter, sender, slot);
  char what[256];
  long k, first = -1, nbad = 0;
  int count = -1;

  if (st != NULL) {
    if (st->MPI_SOURCE != sender) {
      snprintf(what, sizeof what, "status.MPI_SOURCE is %d, expected %d", st->MPI_SOURCE, sender);
      p2p_fail(what, msg, rank, size, iter, slot, sender);
    }
    P2P_CHECK(MMPI_Get_count(st, MPI_CHAR, &count));
    if (count != len) {
      snprintf(what, sizeof what, "received %d bytes, expected %ld", count, len);
      p2p_fail(what, msg, rank, size, iter, slot, sender);
    }
  }
  for (k = 0; k < len; k++) {
    if (buf[k] != osu_byte((size_t)k, seed)) {
      if (first < 0) first = k;
      nbad++;
    }
  }
  if (nbad > 0) {
    snprintf(what, sizeof what, "byte %ld is 0x%02x, expected 0x%02x; %ld of %ld bytes differ",
             first, buf[first], osu_byte((size_t)first, seed), nbad, len);
    p2p_fail(what, msg, rank, size, iter, slot, sender);
  }
}

/* ---- synchronisation: zero-byte ping-pong instead of MPI_Barrier ------- */

static void p2p_sync(int rank) {
  char dummy = 0;
  if (rank == 0) {
    P2P_CHECK(MMPI_Send(&dummy, 0, MPI_CHAR, 1, P2P_TAG_SYNC, MMPI_COMM_WORLD));
    P2P_CHECK(MMPI_Recv(&dummy, 0, MPI_CHAR, 1, P2P_TAG_SYNC, MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
  } else if (rank == 1) {
    P2P_CHECK(MMPI_Recv(&dummy, 0, MPI_CHAR, 0, P2P_TAG_SYNC, MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
    P2P_CHECK(MMPI_Send(&dummy, 0, MPI_CHAR, 0, P2P_TAG_SYNC, MMPI_COMM_WORLD));
  }
}

/* ---- output --------------------------------------------------------------- */

static void p2p_header(const char* test, const char* unit) {
  printf("# OSU MPI-style %s Test (%s)\n", test, MMPI_VARIANT);
  printf("%-*s%*s\n", 10, "# Size", P2P_FIELD_WIDTH, unit);
  fflush(stdout);
}

static void p2p_row(long size, double value) {
  printf("%-*ld%*.*f\n", 10, size, P2P_FIELD_WIDTH, P2P_FLOAT_PRECISION, value);
  fflush(stdout);
}

/* Common start: init, world size check, options. Returns the process exit
 * code to use right away (after MMPI_Finalize) or -1 to go on. */
static int p2p_start(int* argc, char*** argv, enum p2p_kind kind, int* rank, struct p2p_opts* o) {
  int size = 0, rc;
  P2P_CHECK(MMPI_Init(argc, argv));
  P2P_CHECK(MMPI_Comm_rank(MMPI_COMM_WORLD, rank));
  P2P_CHECK(MMPI_Comm_size(MMPI_COMM_WORLD, &size));
  rc = p2p_parse(*argc, *argv, kind, *rank, o);
  if (rc != 0) return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  if (size < 2) {
    if (*rank == 0)
      fprintf(stderr, "%s: this test requires at least two processes (world size is %d)\n",
              p2p_prog, size);
    return EXIT_FAILURE;
  }
  return -1;
}

#endif /* ZIPPER_BENCH_OSU_P2P_H */
