/* osu_coll.h — shared helpers of the OSU-style collective latency benchmarks
 * (osu_barrier.c, osu_bcast.c, osu_reduce.c, osu_allreduce.c, osu_alltoall.c,
 * osu_alltoallv.c).
 *
 * Follows the OSU micro-benchmarks' collective tests (osu_util.h/.c):
 *   - sizes are message sizes in bytes, powers of two, default 1 B .. 1 MiB;
 *     the reductions use MPI_FLOAT + MPI_SUM, so their sizes are count * 4
 *     and sizes that are not a multiple of 4 (1, 2) are skipped, as in OSU;
 *   - 1000 timed + 100 warm-up iterations up to 8 KiB, 100 + 10 above;
 *   - every iteration is timed on its own (MMPI_Wtime around the collective),
 *     followed by an untimed MMPI_Barrier; each rank's mean latency is then
 *     reduced to rank 0 with MIN, MAX and SUM (MMPI_Reduce), and rank 0
 *     prints "size avg" or, with -f, "size avg min max iterations" in OSU's
 *     column layout ("%-10d%18.2f", min/max "%18.2f", iterations "%12d");
 *     barrier has no size column (OSU prints "%17.2f").
 *
 * Differences from OSU, on purpose:
 *   - before the warm-up of every size one extra, untimed verification
 *     iteration is run on data whose expected result is known (payload
 *     patterns derived from size and ranks, integer-valued floats for the
 *     sums). Every rank checks what it received; a mismatch aborts the job
 *     with a clear message: the benchmarks never silently time wrong results.
 *     The barrier test instead checks that a barrier really waits for a late
 *     rank (rank 0, then the last rank, enter 100 ms late);
 *   - zipper options --algorithm NAME and --inter-senders N select the
 *     algorithm of the measured collective once after MMPI_Init through
 *     MMPIX_Coll_set (absent: automatic selection); the native build accepts
 *     and ignores them;
 *   - --iterations-large / --warmup-large set the counts above 8 KiB on their
 *     own (OSU's -i and -x set both).
 *
 * Only the functions of mmpi.h are used. Build with -DMMPI_NATIVE to map
 * them onto plain MPI (mmpi_native.h).
 */
#ifndef ZIPPER_BENCH_OSU_COLL_H
#define ZIPPER_BENCH_OSU_COLL_H

#ifdef MMPI_NATIVE
#include "mmpi_native.h"
#else
#include <mmpi.h>
#define MMPI_VARIANT "MMPI (libmmpi)"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "osu_util.h"

/* OSU defaults for the collective tests (osu_util.h) */
#define COLL_MIN_MSG_SIZE_DEFAULT 1L
#define COLL_MAX_MSG_SIZE_DEFAULT (1L << 20) /* 1 MiB */
#define COLL_MAX_MSG_SIZE_LIMIT (1L << 30)
#define COLL_LARGE_MESSAGE_SIZE 8192L
#define COLL_LOOP_SMALL 1000
#define COLL_SKIP_SMALL 100
#define COLL_LOOP_LARGE 100
#define COLL_SKIP_LARGE 10
#define COLL_FIELD_WIDTH 18
#define COLL_FLOAT_PRECISION 2
#define COLL_ALGO_MAX 64

#define COLL_CHECK(call)                                                                  \
  do {                                                                                    \
    int coll_rc_ = (call);                                                                \
    if (coll_rc_ != MPI_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s failed with error code %d\n", __FILE__, __LINE__, #call, \
              coll_rc_);                                                                  \
      fflush(stderr);                                                                     \
      MMPI_Abort(MMPI_COMM_WORLD, 2);                                                     \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

enum coll_kind {
  COLL_BARRIER,
  COLL_BCAST,
  COLL_REDUCE,
  COLL_ALLREDUCE,
  COLL_ALLTOALL,
  COLL_ALLTOALLV
};

struct coll_info {
  const char* name;  /* MMPIX_Coll_set's collective name */
  const char* title; /* OSU's test title */
  const char* datatype;
  int elem; /* bytes per element; 0 = no sizes (barrier) */
};

static const struct coll_info coll_infos[] = {
    {"barrier", "Barrier", "", 0},
    {"bcast", "Broadcast", "MPI_CHAR", 1},
    {"reduce", "Reduce", "MPI_FLOAT, op MPI_SUM, root 0", 4},
    {"allreduce", "Allreduce", "MPI_FLOAT, op MPI_SUM", 4},
    {"alltoall", "All-to-All Personalized Exchange", "MPI_CHAR", 1},
    {"alltoallv", "All-to-Allv Personalized Exchange", "MPI_CHAR", 1},
};

struct coll_opts {
  long min_size;
  long max_size;
  int iters;
  int iters_large;
  int skip;
  int skip_large;
  int full;
  char algorithm[COLL_ALGO_MAX]; /* "" = automatic */
  int inter_senders;             /* 0 = the rule's choice */
};

static const char* coll_prog = "osu";
static enum coll_kind coll_kind_cur = COLL_BARRIER;

static inline void coll_usage(FILE* f, enum coll_kind kind) {
  int sized = coll_infos[kind].elem != 0;
  fprintf(f, "Usage: %s [options]   (OSU MPI %s Latency Test, zipper variant)\n", coll_prog,
          coll_infos[kind].title);
  if (sized)
    fprintf(f,
            "  -m, --message-size [MIN:]MAX  message sizes in bytes, powers of two from MIN\n"
            "                                to MAX (default %ld:%ld)%s\n",
            COLL_MIN_MSG_SIZE_DEFAULT, COLL_MAX_MSG_SIZE_DEFAULT,
            coll_infos[kind].elem == 4 ? "; MPI_FLOAT elements,\n                              "
                                         "  sizes below 4 bytes are skipped"
                                       : "");
  fprintf(f,
          "  -i, --iterations ITER         timed iterations per size (default %d%s); sets\n"
          "                                --iterations-large too unless that is given\n"
          "  -x, --warmup WARMUP           untimed warm-up iterations (default %d%s); sets\n"
          "                                --warmup-large too unless that is given\n",
          COLL_LOOP_SMALL, sized ? ", sizes <= 8192" : "", COLL_SKIP_SMALL,
          sized ? ", sizes <= 8192" : "");
  if (sized)
    fprintf(f,
            "      --iterations-large ITER   timed iterations above 8192 bytes (default %d)\n"
            "      --warmup-large WARMUP     warm-up iterations above 8192 bytes (default %d)\n",
            COLL_LOOP_LARGE, COLL_SKIP_LARGE);
  fprintf(f,
          "  -f, --full                    also print min and max latency and iterations\n"
          "      --algorithm NAME          zipper: algorithm of %s, set with MMPIX_Coll_set\n"
          "                                once after init (default: automatic selection)\n"
          "      --inter-senders N         zipper: concurrent inter-cluster senders n\n"
          "                                (1..min(x,y); default 0 = the rule's choice)\n"
          "                                Both are ignored by the native build.\n"
          "  -h, --help                    show this help\n"
          "Every size first runs one untimed iteration whose result is verified; a\n"
          "mismatch aborts the run.\n",
          coll_infos[kind].name);
}

/* OSU's -m syntax: "MAX", "MIN:MAX" or "MIN:". */
static inline int coll_parse_sizes(const char* arg, struct coll_opts* o) {
  return osu_parse_sizes(arg, COLL_MAX_MSG_SIZE_LIMIT, &o->min_size, &o->max_size);
}

/* Returns 0 to run, 1 when --help was shown, -1 on a usage error. Every rank
 * parses the same argv; only rank 0 prints. */
static inline int coll_parse(int argc, char** argv, enum coll_kind kind, int rank,
                             struct coll_opts* o) {
  /* 'L' / 'K' / 'A' / 'N': long-only options */
  static const struct osu_option opts[] = {
      {'h', 'h', "--help", 0},         {'f', 'f', "--full", 0},
      {'m', 'm', "--message-size", 1}, {'i', 'i', "--iterations", 1},
      {'x', 'x', "--warmup", 1},       {'L', 0, "--iterations-large", 1},
      {'K', 0, "--warmup-large", 1},   {'A', 0, "--algorithm", 1},
      {'N', 0, "--inter-senders", 1},  {0, 0, NULL, 0}};
  struct osu_args args;
  int opt, iters_large_set = 0, skip_large_set = 0;
  const char *bad = NULL, *badval = NULL, *val = NULL;

  coll_prog = osu_prog_name(argc, argv, coll_prog);
  memset(o, 0, sizeof *o);
  o->min_size = COLL_MIN_MSG_SIZE_DEFAULT;
  o->max_size = COLL_MAX_MSG_SIZE_DEFAULT;
  o->iters = COLL_LOOP_SMALL;
  o->iters_large = COLL_LOOP_LARGE;
  o->skip = COLL_SKIP_SMALL;
  o->skip_large = COLL_SKIP_LARGE;

  osu_args_init(&args, argc, argv);
  while (bad == NULL && (opt = osu_next_option(&args, opts, &val, &bad)) != 0) {
    long v;
    if (opt < 0) {
      badval = args.word;
      break;
    }
    switch (opt) {
      case 'h':
        if (rank == 0) coll_usage(stdout, kind);
        return 1;
      case 'f':
        o->full = 1;
        break;
      case 'm':
        if (coll_parse_sizes(val, o)) {
          bad = "bad message sizes (want [MIN:]MAX, 0 <= MIN <= MAX <= 2^30)";
          badval = val;
        }
        break;
      case 'i':
      case 'L':
        if (osu_parse_long(val, 1, INT_MAX, &v)) {
          bad = "bad iteration count (want >= 1)";
          badval = val;
        } else if (opt == 'i') {
          o->iters = (int)v;
          if (!iters_large_set) o->iters_large = (int)v;
        } else {
          o->iters_large = (int)v;
          iters_large_set = 1;
        }
        break;
      case 'x':
      case 'K':
        if (osu_parse_long(val, 0, INT_MAX, &v)) {
          bad = "bad warm-up count (want >= 0)";
          badval = val;
        } else if (opt == 'x') {
          o->skip = (int)v;
          if (!skip_large_set) o->skip_large = (int)v;
        } else {
          o->skip_large = (int)v;
          skip_large_set = 1;
        }
        break;
      case 'A':
        if (strlen(val) >= COLL_ALGO_MAX) {
          bad = "algorithm name too long";
          badval = val;
        } else {
          /* "auto" and "" mean automatic selection */
          snprintf(o->algorithm, sizeof o->algorithm, "%s", strcmp(val, "auto") == 0 ? "" : val);
        }
        break;
      case 'N':
        if (osu_parse_long(val, 0, INT_MAX, &v)) {
          bad = "bad --inter-senders (want an integer >= 0; 0 = default)";
          badval = val;
        } else {
          o->inter_senders = (int)v;
        }
        break;
    }
  }
  if (bad != NULL) {
    if (rank == 0) {
      fprintf(stderr, "%s: %s: %s\n", coll_prog, bad, badval ? badval : "");
      coll_usage(stderr, kind);
    }
    return -1;
  }
  return 0;
}

static inline void coll_iters_for(const struct coll_opts* o, long size, int* iters, int* skip) {
  if (size > COLL_LARGE_MESSAGE_SIZE) {
    *iters = o->iters_large;
    *skip = o->skip_large;
  } else {
    *iters = o->iters;
    *skip = o->skip;
  }
}

/* First size to run, and the one after `size`: powers of two (0 included
 * when asked for), skipping sizes that are not whole elements. */
static inline long coll_fix_size(long size, int elem) {
  while (elem > 1 && size % elem != 0) size *= 2;
  return size;
}
static inline long coll_first_size(const struct coll_opts* o, int elem) {
  return coll_fix_size(o->min_size, elem);
}
static inline long coll_next_size(long size, int elem) {
  return coll_fix_size(size ? size * 2 : 1, elem);
}

static inline void* coll_alloc(size_t bytes) { return osu_alloc(bytes, coll_prog); }

/* ---- patterns ----------------------------------------------------------- */

static inline uint32_t coll_seed(long size, int a, int b) {
  return osu_seed4((uint32_t)size, (uint32_t)a, (uint32_t)b, (uint32_t)coll_kind_cur);
}

/* Reduction input of rank r, element i: integer-valued, below 1024, so that
 * float sums over up to 16384 ranks are exact in any order. */
static inline int coll_red_val(long size, int r, long i) {
  return (int)(((unsigned long)i * 131u + (unsigned long)r * 17u + (unsigned long)size * 7u) %
               1021u);
}

static inline void coll_fail(int rank, long size, const char* what) {
  char sz[64] = "";
  if (size >= 0) snprintf(sz, sizeof sz, "message size %ld bytes, ", size);
  fprintf(stderr,
          "%s: RESULT VERIFICATION FAILED on rank %d: %s (%sverification iteration). "
          "Aborting: the collective returns wrong results, its timings would be "
          "meaningless.\n",
          coll_prog, rank, what, sz);
  fflush(stderr);
  MMPI_Abort(MMPI_COMM_WORLD, 3);
  exit(3);
}

/* Checks len bytes of buf against the pattern of seed; `what` names the
 * block ("data from rank 3"). */
static inline void coll_verify_bytes(const unsigned char* buf, long len, uint32_t seed, int rank,
                                     long size, const char* what) {
  long k, first = -1, nbad = 0;
  for (k = 0; k < len; k++) {
    if (buf[k] != osu_byte((size_t)k, seed)) {
      if (first < 0) first = k;
      nbad++;
    }
  }
  if (nbad > 0) {
    char msg[384];
    snprintf(msg, sizeof msg, "%s: byte %ld is 0x%02x, expected 0x%02x; %ld of %ld bytes differ",
             what, first, buf[first], osu_byte((size_t)first, seed), nbad, len);
    coll_fail(rank, size, msg);
  }
}

/* Checks count floats against the sum over all nranks ranks of coll_red_val. */
static inline void coll_verify_sum(const float* buf, long count, int nranks, int rank, long size,
                                   const char* what) {
  long i, first = -1, nbad = 0;
  double firstexp = 0.0;
  for (i = 0; i < count; i++) {
    long exp = 0;
    int r;
    for (r = 0; r < nranks; r++) exp += coll_red_val(size, r, i);
    if (buf[i] != (float)exp) {
      if (first < 0) {
        first = i;
        firstexp = (double)exp;
      }
      nbad++;
    }
  }
  if (nbad > 0) {
    char msg[384];
    snprintf(msg, sizeof msg, "%s: element %ld is %.9g, expected %.9g; %ld of %ld elements differ",
             what, first, (double)buf[first], firstexp, nbad, count);
    coll_fail(rank, size, msg);
  }
}

static inline void coll_fill_red(float* buf, long count, long size, int rank) {
  long i;
  for (i = 0; i < count; i++) buf[i] = (float)coll_red_val(size, rank, i);
}

/* MPI forbids the collective to modify the send buffer: check it still holds
 * this rank's input. */
static inline void coll_verify_red_input(const float* buf, long count, long size, int rank) {
  long i;
  for (i = 0; i < count; i++)
    if (buf[i] != (float)coll_red_val(size, rank, i)) {
      char msg[256];
      snprintf(msg, sizeof msg,
               "send buffer modified by the collective: element %ld is %.9g, was %d", i,
               (double)buf[i], coll_red_val(size, rank, i));
      coll_fail(rank, size, msg);
    }
}

static inline void coll_poison_floats(float* buf, long count) {
  long i;
  for (i = 0; i < count; i++) buf[i] = -1.0f;
}

/* ---- timing and output ---------------------------------------------------- */

struct coll_timer {
  double total;
  double t0;
};

static inline void coll_header(enum coll_kind kind, const struct coll_opts* o, int nranks) {
  printf("# OSU MPI %s Latency Test\n", coll_infos[kind].title);
#ifdef MMPI_NATIVE
  printf("# zipper: %s, %d ranks; algorithm: Open MPI's own%s\n", MMPI_VARIANT, nranks,
         (o->algorithm[0] || o->inter_senders) ? " (--algorithm/--inter-senders ignored)" : "");
#else
  int lo = 0, hi = 0;
  MMPIX_Layout(&lo, &hi, NULL);
  if (hi > 0)
    printf("# zipper: %s, %d ranks (layout %d+%d); ", MMPI_VARIANT, nranks, lo, hi);
  else
    printf("# zipper: %s, %d ranks; ", MMPI_VARIANT, nranks);
  printf("algorithm: %s, inter-senders: ", o->algorithm[0] ? o->algorithm : "auto");
  if (o->inter_senders > 0)
    printf("%d\n", o->inter_senders);
  else
    printf("default\n");
#endif
  if (coll_infos[kind].datatype[0]) printf("# Datatype: %s\n", coll_infos[kind].datatype);
  if (coll_infos[kind].elem) {
    printf("%-*s", 10, "# Size");
    printf("%*s", COLL_FIELD_WIDTH, "Avg Latency(us)");
  } else {
    printf("# Avg Latency(us)");
  }
  if (o->full) {
    printf("%*s", COLL_FIELD_WIDTH, "Min Latency(us)");
    printf("%*s", COLL_FIELD_WIDTH, "Max Latency(us)");
    printf("%*s\n", 12, "Iterations");
  } else {
    printf("\n");
  }
  fflush(stdout);
}

/* OSU's statistics: each rank's mean latency (us), MIN/MAX/SUM to rank 0. */
static inline void coll_report(enum coll_kind kind, const struct coll_opts* o, int rank, int nranks,
                               long size, double timer, int iters) {
  double lat = timer * 1e6 / iters, min_t = 0.0, max_t = 0.0, sum_t = 0.0;
  COLL_CHECK(MMPI_Reduce(&lat, &min_t, 1, MPI_DOUBLE, MPI_MIN, 0, MMPI_COMM_WORLD));
  COLL_CHECK(MMPI_Reduce(&lat, &max_t, 1, MPI_DOUBLE, MPI_MAX, 0, MMPI_COMM_WORLD));
  COLL_CHECK(MMPI_Reduce(&lat, &sum_t, 1, MPI_DOUBLE, MPI_SUM, 0, MMPI_COMM_WORLD));
  if (rank != 0) return;
  if (coll_infos[kind].elem) {
    printf("%-*ld", 10, size);
    printf("%*.*f", COLL_FIELD_WIDTH, COLL_FLOAT_PRECISION, sum_t / nranks);
  } else {
    printf("%*.*f", 17, COLL_FLOAT_PRECISION, sum_t / nranks);
  }
  if (o->full)
    printf("%*.*f%*.*f%*d\n", COLL_FIELD_WIDTH, COLL_FLOAT_PRECISION, min_t, COLL_FIELD_WIDTH,
           COLL_FLOAT_PRECISION, max_t, 12, iters);
  else
    printf("\n");
  fflush(stdout);
}

/* The OSU per-size loop of the sized tests. verify(ctx, size) runs the
 * untimed verification iteration, op(ctx, size) one collective. */
typedef void (*coll_fn)(void* ctx, long size);

static inline void coll_loop(enum coll_kind kind, const struct coll_opts* o, int rank, int nranks,
                             coll_fn verify, coll_fn op, void* ctx) {
  int elem = coll_infos[kind].elem;
  long size;
  for (size = coll_first_size(o, elem); size <= o->max_size; size = coll_next_size(size, elem)) {
    int iters, skip, i;
    double timer = 0.0;

    coll_iters_for(o, size, &iters, &skip);

    COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));
    verify(ctx, size);
    COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));

    for (i = 0; i < iters + skip; i++) {
      double t0 = MMPI_Wtime(), t1;
      op(ctx, size);
      t1 = MMPI_Wtime();
      if (i >= skip) timer += t1 - t0;
      COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));
    }
    coll_report(kind, o, rank, nranks, size, timer, iters);
    COLL_CHECK(MMPI_Barrier(MMPI_COMM_WORLD));
  }
}

/* Common start: init, options, algorithm selection, header. Returns the
 * process exit code to use right away (after MMPI_Finalize) or -1 to go on. */
static inline int coll_start(int* argc, char*** argv, enum coll_kind kind, int* rank, int* nranks,
                             struct coll_opts* o) {
  int rc;
  coll_kind_cur = kind;
  COLL_CHECK(MMPI_Init(argc, argv));
  COLL_CHECK(MMPI_Comm_rank(MMPI_COMM_WORLD, rank));
  COLL_CHECK(MMPI_Comm_size(MMPI_COMM_WORLD, nranks));
  rc = coll_parse(*argc, *argv, kind, *rank, o);
  if (rc != 0) return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  if (*nranks < 2) {
    if (*rank == 0)
      fprintf(stderr, "%s: this test requires at least two processes (world size is %d)\n",
              coll_prog, *nranks);
    return EXIT_FAILURE;
  }
  if (kind == COLL_ALLTOALL || kind == COLL_ALLTOALLV) {
    /* counts and displacements are ints: size * nranks must fit */
    if (o->max_size > (long)(INT_MAX / *nranks)) {
      if (*rank == 0)
        fprintf(stderr, "%s: -m: maximum size %ld too large for %d ranks (max %ld)\n", coll_prog,
                o->max_size, *nranks, (long)(INT_MAX / *nranks));
      return EXIT_FAILURE;
    }
  }
#ifndef MMPI_NATIVE
  if (o->algorithm[0] != '\0' || o->inter_senders != 0) {
    rc = MMPIX_Coll_set(coll_infos[kind].name, o->algorithm[0] ? o->algorithm : NULL,
                        o->inter_senders);
    if (rc != MPI_SUCCESS) {
      if (*rank == 0)
        fprintf(stderr,
                "%s: MMPIX_Coll_set(\"%s\", \"%s\", %d) failed with error code %d "
                "(unknown algorithm for %s?)\n",
                coll_prog, coll_infos[kind].name, o->algorithm[0] ? o->algorithm : "(automatic)",
                o->inter_senders, rc, coll_infos[kind].name);
      return EXIT_FAILURE;
    }
  }
#else
  /* native: MMPIX_Coll_set is a no-op (mmpi_native.h); nothing to select */
  (void)MMPIX_Coll_set(coll_infos[kind].name, o->algorithm, o->inter_senders);
#endif
  if (*rank == 0) coll_header(kind, o, *nranks);
  return -1;
}

#endif /* ZIPPER_BENCH_OSU_COLL_H */
