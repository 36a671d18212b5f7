/* osu_rma.h — shared code of the OSU 7.2-style one-sided benchmarks
 * (osu_put_latency.c, osu_get_latency.c, osu_put_bw.c, osu_get_bw.c,
 * osu_put_bibw.c, osu_acc_latency.c, osu_get_acc_latency.c,
 * osu_fop_latency.c, osu_cas_latency.c).
 *
 * Plain MPI-3 C, built with mpicc and nothing else, so that the same binary
 * runs natively and unmodified through `zipper-run --transparent`.
 *
 * Each benchmark file only says what one operation is and what the memory
 * holds after n of them (struct rma_bench); this header owns the options,
 * the windows, the synchronisation loops, the timing and the checks.
 *
 * Options, as OSU's one-sided benchmarks:
 *   -w create|allocate|dynamic   window creation (default allocate)
 *   -s lock|flush|flush_local|lock_all|fence|pscw  synchronisation (default
 *                                as OSU: flush, pscw for osu_put_bibw)
 *   -m [MIN:]MAX  -i ITER  -x WARMUP  -W WINDOW (bandwidth tests)
 *   -c            validation: after every size, every byte of every target
 *                 window and every fetched result is compared with the value
 *                 n operations must leave there; a difference aborts (exit 3)
 * Extension: -w and -s take comma lists or "all"; every combination runs in
 * turn with its own header (so one launch covers a whole matrix).
 *
 * Loops (OSU's): latency benchmarks time one operation; with lock, flush,
 * flush_local and lock_all rank 0 is the origin and rank 1 a passive target;
 * with fence and pscw the two ranks take turns (a ping-pong, time / 2).
 * Bandwidth benchmarks issue WINDOW operations per epoch (put_bibw: both
 * ranks at once). Exactly two processes.
 */
#ifndef ZIPPER_BENCH_OSU_RMA_H
#define ZIPPER_BENCH_OSU_RMA_H

#include <limits.h>

#include "mmpi_native.h" /* plain MPI; osu_util.h names MMPI_Abort */
#include "osu_util.h"

#define RMA_MAX_MSG_SIZE_DEFAULT (1L << 22) /* 4 MiB */
#define RMA_MAX_MSG_SIZE_LIMIT (1L << 30)
#define RMA_LARGE_MESSAGE_SIZE 8192L
#define RMA_LAT_LOOP_SMALL 10000
#define RMA_LAT_SKIP_SMALL 100
#define RMA_LAT_LOOP_LARGE 1000
#define RMA_LAT_SKIP_LARGE 10
#define RMA_BW_LOOP_SMALL 100
#define RMA_BW_SKIP_SMALL 10
#define RMA_BW_LOOP_LARGE 30
#define RMA_BW_SKIP_LARGE 10
#define RMA_WINDOW_SIZE_DEFAULT 32
#define RMA_WINDOW_SIZE_LIMIT 1024
#define RMA_FIELD_WIDTH 18

#define RMA_CHECK(call)                                                               \
  do {                                                                                \
    int rma_rc_ = (call);                                                             \
    if (rma_rc_ != MPI_SUCCESS) {                                                     \
      char rma_msg_[MPI_MAX_ERROR_STRING];                                            \
      int rma_len_ = 0;                                                               \
      MPI_Error_string(rma_rc_, rma_msg_, &rma_len_);                                 \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, rma_msg_); \
      fflush(stderr);                                                                 \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                   \
      exit(2);                                                                        \
    }                                                                                 \
  } while (0)

enum rma_flavour { RMA_WIN_CREATE, RMA_WIN_ALLOCATE, RMA_WIN_DYNAMIC, RMA_N_FLAVOURS };
enum rma_sync {
  RMA_LOCK,
  RMA_FLUSH,
  RMA_FLUSH_LOCAL,
  RMA_LOCK_ALL,
  RMA_FENCE,
  RMA_PSCW,
  RMA_N_SYNCS
};
enum rma_kind { RMA_LATENCY, RMA_BW, RMA_BIBW };

static const char* const rma_flavour_opt[RMA_N_FLAVOURS] = {"create", "allocate", "dynamic"};
static const char* const rma_flavour_call[RMA_N_FLAVOURS] = {"MPI_Win_create", "MPI_Win_allocate",
                                                             "MPI_Win_create_dynamic"};
static const char* const rma_sync_opt[RMA_N_SYNCS] = {"lock",     "flush", "flush_local",
                                                      "lock_all", "fence", "pscw"};
static const char* const rma_sync_call[RMA_N_SYNCS] = {
    "MPI_Win_lock/unlock",         "MPI_Win_flush", "MPI_Win_flush_local",
    "MPI_Win_lock_all/unlock_all", "MPI_Win_fence", "Post/Start/Complete/Wait"};

struct rma_ctx;

/* One benchmark: what it times and what its memory must hold. */
struct rma_bench {
  const char* title; /* "MPI_Put Latency" */
  enum rma_kind kind;
  unsigned syncs; /* bit (1u << enum rma_sync) per supported -s */
  enum rma_sync default_sync;
  long fixed_size; /* > 0: one size only (atomics: 8 bytes) */
  long elem_bytes; /* sizes are multiples of this (others are skipped); 0: 1 */
  int lock_type;   /* MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED for -s lock */
  /* Issues one operation to the peer on window slot `slot`. */
  void (*op)(struct rma_ctx* c, long size, int slot);
  /* Before a size: sets this rank's origin buffers and its own window
   * (bytes [0, size * slots)) to the values the run starts from. */
  void (*init)(struct rma_ctx* c, long size, int slots);
  /* After n operations per slot: compares what this rank holds (as target:
   * its window; as origin: fetched results) with the expected values;
   * returns NULL or a description of the first difference. */
  const char* (*check)(struct rma_ctx* c, long size, int slots, long n, int as_origin,
                       int as_target);
};

struct rma_ctx {
  const struct rma_bench* b;
  int rank, peer;
  enum rma_flavour flavour;
  enum rma_sync sync;
  MPI_Win win;
  unsigned char* win_base; /* this rank's window memory */
  MPI_Aint peer_base;      /* displacement of the peer's byte 0 (dynamic: its address) */
  long win_bytes;
  unsigned char* sbuf; /* origin buffers, win_bytes each */
  unsigned char* rbuf;
  unsigned char* cbuf;
  unsigned char* xbuf; /* scratch for expected values */
  long ops_done;       /* operations issued since init() (CAS counts its compares) */
  MPI_Group peer_group;
  char why[512]; /* check() writes its message here */
};

struct rma_opts {
  long min_size, max_size;
  int iters, iters_large, skip, skip_large, window;
  unsigned flavours, syncs; /* bit masks */
  int validate;
};

static const char* rma_prog = "osu_rma";

static void rma_usage(FILE* f, const struct rma_bench* b) {
  int lat = b->kind == RMA_LATENCY, s;
  fprintf(f,
          "Usage: %s [options]   (exactly 2 processes)\n"
          "  -w, --win-option LIST      window creation: create, allocate, dynamic\n"
          "                             (default allocate)\n"
          "  -s, --sync-option LIST     synchronisation:",
          rma_prog);
  for (s = 0; s < RMA_N_SYNCS; s++)
    if (b->syncs & (1u << s)) fprintf(f, " %s", rma_sync_opt[s]);
  fprintf(f,
          "\n                             (default %s)\n"
          "                             LIST: one value, a comma list, or all\n",
          rma_sync_opt[b->default_sync]);
  if (b->fixed_size == 0)
    fprintf(f, "  -m, --message-size [MIN:]MAX  sizes, powers of two (default 1:%ld)\n",
            RMA_MAX_MSG_SIZE_DEFAULT);
  fprintf(f,
          "  -i, --iterations ITER      timed iterations per size (default %d, %d above %ld B)\n"
          "  -x, --warmup WARMUP        untimed iterations per size (default %d, %d above %ld B)\n",
          lat ? RMA_LAT_LOOP_SMALL : RMA_BW_LOOP_SMALL,
          lat ? RMA_LAT_LOOP_LARGE : RMA_BW_LOOP_LARGE, RMA_LARGE_MESSAGE_SIZE,
          lat ? RMA_LAT_SKIP_SMALL : RMA_BW_SKIP_SMALL,
          lat ? RMA_LAT_SKIP_LARGE : RMA_BW_SKIP_LARGE, RMA_LARGE_MESSAGE_SIZE);
  if (!lat)
    fprintf(f, "  -W, --window-size WINDOW   operations per epoch (default %d)\n",
            RMA_WINDOW_SIZE_DEFAULT);
  fprintf(f,
          "  -c, --validation           check every byte and result after each size\n"
          "  -h, --help                 show this help\n");
}

/* Parses a comma list of names[0..n) (or "all", restricted to `allowed`)
 * into a bit mask. Returns 0, or -1 on a name not allowed. */
static int rma_parse_list(const char* arg, const char* const* names, int n, unsigned allowed,
                          unsigned* out) {
  unsigned mask = 0;
  const char* p = arg;
  if (!strcmp(arg, "all")) {
    *out = allowed;
    return 0;
  }
  while (*p != '\0') {
    size_t len = strcspn(p, ",");
    int k, found = -1;
    for (k = 0; k < n; k++)
      if (strlen(names[k]) == len && !strncmp(p, names[k], len)) found = k;
    if (found < 0 || !(allowed & (1u << found))) return -1;
    mask |= 1u << found;
    p += len;
    if (*p == ',') p++;
  }
  if (mask == 0) return -1;
  *out = mask;
  return 0;
}

/* Returns 0 to run, 1 after --help, -1 on a usage error (rank 0 prints). */
static int rma_parse(int argc, char** argv, const struct rma_bench* b, int rank,
                     struct rma_opts* o) {
  static const struct osu_option opts[] = {{'h', 'h', "--help", 0},
                                           {'c', 'c', "--validation", 0},
                                           {'w', 'w', "--win-option", 1},
                                           {'s', 's', "--sync-option", 1},
                                           {'m', 'm', "--message-size", 1},
                                           {'i', 'i', "--iterations", 1},
                                           {'x', 'x', "--warmup", 1},
                                           {'W', 'W', "--window-size", 1},
                                           {0, 0, NULL, 0}};
  int lat = b->kind == RMA_LATENCY, opt;
  struct osu_args args;
  const char *bad = NULL, *badval = NULL, *val = NULL;
  rma_prog = osu_prog_name(argc, argv, rma_prog);
  o->min_size = b->fixed_size ? b->fixed_size : 1;
  o->max_size = b->fixed_size ? b->fixed_size : RMA_MAX_MSG_SIZE_DEFAULT;
  o->iters = lat ? RMA_LAT_LOOP_SMALL : RMA_BW_LOOP_SMALL;
  o->iters_large = lat ? RMA_LAT_LOOP_LARGE : RMA_BW_LOOP_LARGE;
  o->skip = lat ? RMA_LAT_SKIP_SMALL : RMA_BW_SKIP_SMALL;
  o->skip_large = lat ? RMA_LAT_SKIP_LARGE : RMA_BW_SKIP_LARGE;
  o->window = lat ? 1 : RMA_WINDOW_SIZE_DEFAULT;
  o->flavours = 1u << RMA_WIN_ALLOCATE;
  o->syncs = 1u << b->default_sync;
  o->validate = 0;

  osu_args_init(&args, argc, argv);
  while (bad == NULL && (opt = osu_next_option(&args, opts, &val, &bad)) != 0) {
    long v;
    /* latency has no window; fixed-size ones no sizes */
    if ((opt == 'W' && lat) || (opt == 'm' && b->fixed_size)) bad = "unknown option";
    if (bad != NULL) {
      badval = args.word;
      break;
    }
    badval = val;
    switch (opt) {
      case 'h':
        if (rank == 0) rma_usage(stdout, b);
        return 1;
      case 'c':
        o->validate = 1;
        break;
      case 'w':
        if (rma_parse_list(val, rma_flavour_opt, RMA_N_FLAVOURS, (1u << RMA_N_FLAVOURS) - 1,
                           &o->flavours))
          bad = "bad window creation (want create, allocate, dynamic, a comma list or all)";
        break;
      case 's':
        if (rma_parse_list(val, rma_sync_opt, RMA_N_SYNCS, b->syncs, &o->syncs))
          bad = "synchronisation not offered by this benchmark (see -h)";
        break;
      case 'm':
        if (osu_parse_sizes(val, RMA_MAX_MSG_SIZE_LIMIT, &o->min_size, &o->max_size))
          bad = "bad message sizes (want [MIN:]MAX, 0 <= MIN <= MAX <= 2^30)";
        break;
      case 'i':
        if (osu_parse_long(val, 1, INT_MAX / 2, &v))
          bad = "bad iteration count (want >= 1)";
        else
          o->iters = o->iters_large = (int)v;
        break;
      case 'x':
        if (osu_parse_long(val, 0, INT_MAX / 2, &v))
          bad = "bad warm-up count (want >= 0)";
        else
          o->skip = o->skip_large = (int)v;
        break;
      case 'W':
        if (osu_parse_long(val, 1, RMA_WINDOW_SIZE_LIMIT, &v))
          bad = "bad window size (want 1..1024)";
        else
          o->window = (int)v;
        break;
    }
  }
  if (bad == NULL && (long)o->window * o->max_size > (1L << 31) - 1) {
    bad = "WINDOW x largest size exceeds 2 GiB";
    badval = "";
  }
  if (bad != NULL) {
    if (rank == 0) {
      fprintf(stderr, "%s: %s: %s\n", rma_prog, bad, badval ? badval : "");
      rma_usage(stderr, b);
    }
    return -1;
  }
  return 0;
}

/* ---- windows ------------------------------------------------------------- */

/* Creates the window of this combination: win_bytes of memory per rank and
 * the origin buffers; dynamic windows attach the memory and exchange its
 * address with the peer. */
static void rma_win_open(struct rma_ctx* c, long win_bytes) {
  MPI_Aint mine = 0;
  MPI_Group world;
  long bytes = win_bytes > 0 ? win_bytes : 1;
  c->win_bytes = win_bytes;
  c->peer_base = 0;
  switch (c->flavour) {
    case RMA_WIN_CREATE:
      c->win_base = osu_alloc((size_t)bytes, rma_prog);
      RMA_CHECK(
          MPI_Win_create(c->win_base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win));
      break;
    case RMA_WIN_ALLOCATE:
      RMA_CHECK(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win_base,
                                 &c->win));
      break;
    case RMA_WIN_DYNAMIC:
      c->win_base = osu_alloc((size_t)bytes, rma_prog);
      RMA_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->win));
      RMA_CHECK(MPI_Win_attach(c->win, c->win_base, (MPI_Aint)bytes));
      RMA_CHECK(MPI_Get_address(c->win_base, &mine));
      RMA_CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, c->peer, 7, &c->peer_base, 1, MPI_AINT, c->peer, 7,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      break;
    default:
      abort();
  }
  c->sbuf = osu_alloc((size_t)bytes, rma_prog);
  c->rbuf = osu_alloc((size_t)bytes, rma_prog);
  c->cbuf = osu_alloc((size_t)bytes, rma_prog);
  c->xbuf = osu_alloc((size_t)bytes, rma_prog);
  RMA_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  RMA_CHECK(MPI_Group_incl(world, 1, &c->peer, &c->peer_group));
  RMA_CHECK(MPI_Group_free(&world));
}

static void rma_win_close(struct rma_ctx* c) {
  RMA_CHECK(MPI_Group_free(&c->peer_group));
  if (c->flavour == RMA_WIN_DYNAMIC) RMA_CHECK(MPI_Win_detach(c->win, c->win_base));
  RMA_CHECK(MPI_Win_free(&c->win));
  if (c->flavour != RMA_WIN_ALLOCATE) free(c->win_base);
  free(c->sbuf);
  free(c->rbuf);
  free(c->cbuf);
  free(c->xbuf);
  c->win_base = c->sbuf = c->rbuf = c->cbuf = c->xbuf = NULL;
}

/* Target displacement of byte `off` of the peer's window. */
static MPI_Aint rma_disp(const struct rma_ctx* c, long off) { return c->peer_base + (MPI_Aint)off; }

/* Local loads and stores on this rank's own window, portable in both memory
 * models: inside an exclusive lock of itself (never inside an active-target
 * epoch: the fence loops end with MPI_MODE_NOSUCCEED). */
static void rma_local_begin(struct rma_ctx* c) {
  RMA_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, c->win));
}
static void rma_local_end(struct rma_ctx* c) { RMA_CHECK(MPI_Win_unlock(c->rank, c->win)); }

/* ---- timed loops ----------------------------------------------------------- */

/* Passive target: rank 0 issues `ops` operations per epoch, n epochs. */
static void rma_passive_loop(struct rma_ctx* c, long size, int ops, int n, int skip,
                             double* t_start) {
  int i, j;
  const int lt = c->b->lock_type;
  if (c->rank != 0) return; /* the target makes no call: passive */
  if (c->sync == RMA_FLUSH || c->sync == RMA_FLUSH_LOCAL)
    RMA_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, c->peer, 0, c->win));
  for (i = 0; i < n; i++) {
    if (i == skip) *t_start = MPI_Wtime();
    if (c->sync == RMA_LOCK) RMA_CHECK(MPI_Win_lock(lt, c->peer, 0, c->win));
    if (c->sync == RMA_LOCK_ALL) RMA_CHECK(MPI_Win_lock_all(0, c->win));
    for (j = 0; j < ops; j++) c->b->op(c, size, j);
    if (c->sync == RMA_LOCK) RMA_CHECK(MPI_Win_unlock(c->peer, c->win));
    if (c->sync == RMA_LOCK_ALL) RMA_CHECK(MPI_Win_unlock_all(c->win));
    if (c->sync == RMA_FLUSH) RMA_CHECK(MPI_Win_flush(c->peer, c->win));
    if (c->sync == RMA_FLUSH_LOCAL) RMA_CHECK(MPI_Win_flush_local(c->peer, c->win));
  }
  if (c->sync == RMA_FLUSH || c->sync == RMA_FLUSH_LOCAL)
    RMA_CHECK(MPI_Win_unlock(c->peer, c->win));
}

/* Active target, latency: the ranks take turns (rank 0, then rank 1). */
static void rma_active_pingpong(struct rma_ctx* c, long size, int n, int skip, double* t_start) {
  int i;
  for (i = 0; i < n; i++) {
    if (i == skip) *t_start = MPI_Wtime();
    if (c->sync == RMA_FENCE) {
      RMA_CHECK(MPI_Win_fence(0, c->win));
      if (c->rank == 0) c->b->op(c, size, 0);
      RMA_CHECK(MPI_Win_fence(0, c->win));
      if (c->rank == 1) c->b->op(c, size, 0);
    } else if (c->rank == 0) {
      RMA_CHECK(MPI_Win_start(c->peer_group, 0, c->win));
      c->b->op(c, size, 0);
      RMA_CHECK(MPI_Win_complete(c->win));
      RMA_CHECK(MPI_Win_post(c->peer_group, 0, c->win));
      RMA_CHECK(MPI_Win_wait(c->win));
    } else {
      RMA_CHECK(MPI_Win_post(c->peer_group, 0, c->win));
      RMA_CHECK(MPI_Win_wait(c->win));
      RMA_CHECK(MPI_Win_start(c->peer_group, 0, c->win));
      c->b->op(c, size, 0);
      RMA_CHECK(MPI_Win_complete(c->win));
    }
  }
  if (c->sync == RMA_FENCE) RMA_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win));
}

/* Active target, bandwidth: rank 0 (both ranks when bidirectional) issues
 * `ops` operations per epoch. */
static void rma_active_stream(struct rma_ctx* c, long size, int ops, int n, int skip, int both,
                              double* t_start) {
  int i, j;
  int origin = both || c->rank == 0, target = both || c->rank == 1;
  for (i = 0; i < n; i++) {
    if (i == skip) *t_start = MPI_Wtime();
    if (c->sync == RMA_FENCE) {
      RMA_CHECK(MPI_Win_fence(0, c->win));
      if (origin)
        for (j = 0; j < ops; j++) c->b->op(c, size, j);
      RMA_CHECK(MPI_Win_fence(0, c->win));
    } else {
      if (target) RMA_CHECK(MPI_Win_post(c->peer_group, 0, c->win));
      if (origin) {
        RMA_CHECK(MPI_Win_start(c->peer_group, 0, c->win));
        for (j = 0; j < ops; j++) c->b->op(c, size, j);
        RMA_CHECK(MPI_Win_complete(c->win));
      }
      if (target) RMA_CHECK(MPI_Win_wait(c->win));
    }
  }
  if (c->sync == RMA_FENCE) RMA_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win));
}

static void rma_fail(struct rma_ctx* c, long size, const char* what) {
  fprintf(stderr,
          "%s: VALIDATION FAILED on rank %d (-w %s -s %s, size %ld bytes): %s. Aborting: the "
          "transport corrupts, loses or repeats operations.\n",
          rma_prog, c->rank, rma_flavour_opt[c->flavour], rma_sync_opt[c->sync], size, what);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  exit(3);
}

/* One combination (flavour, sync) over all sizes; rank 0 prints the table. */
static void rma_run_combination(struct rma_ctx* c, const struct rma_opts* o) {
  const struct rma_bench* b = c->b;
  int slots = b->kind == RMA_LATENCY ? 1 : o->window;
  int pingpong = b->kind == RMA_LATENCY && (c->sync == RMA_FENCE || c->sync == RMA_PSCW);
  int both = b->kind == RMA_BIBW || pingpong;
  long size;

  rma_win_open(c, o->max_size * slots);
  if (c->rank == 0) {
    printf("# OSU MPI-style %s Test (zipper's copy)\n", b->title);
    printf("# Window creation: %s\n", rma_flavour_call[c->flavour]);
    printf("# Synchronization: %s\n", rma_sync_call[c->sync]);
    printf("%-10s%*s\n", "# Size", RMA_FIELD_WIDTH,
           b->kind == RMA_LATENCY ? "Latency (us)" : "Bandwidth (MB/s)");
    fflush(stdout);
  }
  for (size = o->min_size; size <= o->max_size; size = size ? size * 2 : 1) {
    if (b->elem_bytes > 1 && size % b->elem_bytes != 0) continue;
    int large = size > RMA_LARGE_MESSAGE_SIZE;
    int iters = large ? o->iters_large : o->iters, skip = large ? o->skip_large : o->skip;
    double t_start = 0.0, t_end, elapsed, value;
    const char* why;

    c->ops_done = 0;
    rma_local_begin(c);
    b->init(c, size, slots);
    rma_local_end(c);
    RMA_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t_start = MPI_Wtime();
    if (c->sync == RMA_FENCE || c->sync == RMA_PSCW) {
      if (pingpong)
        rma_active_pingpong(c, size, iters + skip, skip, &t_start);
      else
        rma_active_stream(c, size, slots, iters + skip, skip, b->kind == RMA_BIBW, &t_start);
    } else {
      rma_passive_loop(c, size, slots, iters + skip, skip, &t_start);
    }
    t_end = MPI_Wtime();
    RMA_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    elapsed = t_end - t_start;
    if (o->validate) {
      rma_local_begin(c);
      why =
          b->check(c, size, slots, (long)iters + skip, c->rank == 0 || both, c->rank == 1 || both);
      rma_local_end(c);
      if (why != NULL) rma_fail(c, size, why);
    }
    if (c->rank == 0) {
      if (b->kind == RMA_LATENCY)
        value = elapsed * 1e6 / iters / (pingpong ? 2.0 : 1.0);
      else
        value = (double)size / 1e6 * iters * slots * (b->kind == RMA_BIBW ? 2 : 1) / elapsed;
      printf("%-10ld%*.2f\n", size, RMA_FIELD_WIDTH, value);
      fflush(stdout);
    }
  }
  RMA_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  rma_win_close(c);
}

/* The whole program: options, then every (flavour, sync) asked for. */
static int rma_main(int argc, char** argv, const struct rma_bench* b) {
  struct rma_opts o;
  struct rma_ctx c;
  int nprocs = 0, rc, f, s;

  memset(&c, 0, sizeof c);
  c.b = b;
  RMA_CHECK(MPI_Init(&argc, &argv));
  RMA_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &c.rank));
  RMA_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
  rc = rma_parse(argc, argv, b, c.rank, &o);
  if (rc == 0 && nprocs != 2) {
    if (c.rank == 0)
      fprintf(stderr, "%s: this test requires exactly two processes (world size is %d)\n", rma_prog,
              nprocs);
    rc = -1;
  }
  if (rc != 0) {
    MPI_Finalize();
    return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  }
  c.peer = 1 - c.rank;
  for (f = 0; f < RMA_N_FLAVOURS; f++)
    for (s = 0; s < RMA_N_SYNCS; s++)
      if ((o.flavours & (1u << f)) && (o.syncs & (1u << s))) {
        c.flavour = (enum rma_flavour)f;
        c.sync = (enum rma_sync)s;
        rma_run_combination(&c, &o);
        if (c.rank == 0 && o.validate)
          printf("# Validation passed: -w %s -s %s\n", rma_flavour_opt[f], rma_sync_opt[s]);
      }
  MPI_Finalize();
  return EXIT_SUCCESS;
}

/* ---- helpers for the checks ------------------------------------------------ */

/* Pattern seed of (size, slot, writer rank); "which" tells apart the buffers
 * of one benchmark (origin data, initial window, compare values). */
static uint32_t rma_seed(long size, int slot, int rank, int which) {
  return osu_seed4((uint32_t)size, (uint32_t)slot, (uint32_t)rank, (uint32_t)which);
}

/* Compares len bytes at got with expect(k); fills c->why and returns it on the
 * first difference, else NULL. */
static const char* rma_compare(struct rma_ctx* c, const char* what, const unsigned char* got,
                               const unsigned char* want, long len) {
  long k, nbad = 0, first = -1;
  for (k = 0; k < len; k++)
    if (got[k] != want[k]) {
      if (first < 0) first = k;
      nbad++;
    }
  if (nbad == 0) return NULL;
  snprintf(c->why, sizeof c->why,
           "%s: byte %ld is 0x%02x, expected 0x%02x; %ld of %ld bytes differ", what, first,
           got[first], want[first], nbad, len);
  return c->why;
}

/* ---- MPI_Put and MPI_Get, shared by the latency and bandwidth tests -------- */

/* Put: slot j of this rank's origin buffer carries pattern (size, j, rank);
 * the window starts as its peer's pattern complemented, so a byte never
 * written is caught. */
static inline void rma_put_op(struct rma_ctx* c, long size, int slot) {
  long off = size * slot;
  RMA_CHECK(MPI_Put(c->sbuf + off, (int)size, MPI_BYTE, c->peer, rma_disp(c, off), (int)size,
                    MPI_BYTE, c->win));
}

static inline void rma_put_init(struct rma_ctx* c, long size, int slots) {
  int j;
  for (j = 0; j < slots; j++) {
    osu_fill(c->sbuf + size * j, size, rma_seed(size, j, c->rank, 0));
    osu_poison(c->win_base + size * j, size, rma_seed(size, j, c->peer, 0));
  }
}

static inline const char* rma_put_check(struct rma_ctx* c, long size, int slots, long n,
                                        int as_origin, int as_target) {
  int j;
  const char* why = NULL;
  (void)n;
  for (j = 0; j < slots && why == NULL; j++) {
    if (as_target) {
      osu_fill(c->xbuf, size, rma_seed(size, j, c->peer, 0));
      why = rma_compare(c, "target window after MPI_Put", c->win_base + size * j, c->xbuf, size);
    }
    if (why == NULL && as_origin) {
      osu_fill(c->xbuf, size, rma_seed(size, j, c->rank, 0));
      why = rma_compare(c, "origin buffer changed by MPI_Put", c->sbuf + size * j, c->xbuf, size);
    }
  }
  return why;
}

/* Get: the window holds pattern (size, j, rank, 1); the origin's result
 * buffer starts as the complement of what it must receive. */
static inline void rma_get_op(struct rma_ctx* c, long size, int slot) {
  long off = size * slot;
  RMA_CHECK(MPI_Get(c->rbuf + off, (int)size, MPI_BYTE, c->peer, rma_disp(c, off), (int)size,
                    MPI_BYTE, c->win));
}

static inline void rma_get_init(struct rma_ctx* c, long size, int slots) {
  int j;
  for (j = 0; j < slots; j++) {
    osu_fill(c->win_base + size * j, size, rma_seed(size, j, c->rank, 1));
    osu_poison(c->rbuf + size * j, size, rma_seed(size, j, c->peer, 1));
  }
}

static inline const char* rma_get_check(struct rma_ctx* c, long size, int slots, long n,
                                        int as_origin, int as_target) {
  int j;
  const char* why = NULL;
  (void)n;
  for (j = 0; j < slots && why == NULL; j++) {
    if (as_origin) {
      osu_fill(c->xbuf, size, rma_seed(size, j, c->peer, 1));
      why = rma_compare(c, "result of MPI_Get", c->rbuf + size * j, c->xbuf, size);
    }
    if (why == NULL && as_target) {
      osu_fill(c->xbuf, size, rma_seed(size, j, c->rank, 1));
      why =
          rma_compare(c, "target window changed by MPI_Get", c->win_base + size * j, c->xbuf, size);
    }
  }
  return why;
}

/* Accumulate tests: c->xbuf = start + times * data, element by element, for
 * the uint32_t arrays whose bytes are the patterns of the two seeds. */
static inline void rma_expect_sum(struct rma_ctx* c, long size, uint32_t start, uint32_t data,
                                  long times) {
  long k;
  osu_fill(c->xbuf, size, start);
  for (k = 0; k + 4 <= size; k += 4) {
    uint32_t x, d;
    unsigned char db[4];
    int b;
    for (b = 0; b < 4; b++) db[b] = osu_byte((size_t)(k + b), data);
    memcpy(&x, c->xbuf + k, 4);
    memcpy(&d, db, 4);
    x += (uint32_t)times * d;
    memcpy(c->xbuf + k, &x, 4);
  }
}

#define RMA_ALL_SYNCS ((1u << RMA_N_SYNCS) - 1)

#endif /* ZIPPER_BENCH_OSU_RMA_H */
