/* One-sided communication across the clusters. Suites:
 *   rma_ops      every operation x every synchronisation x three datatype
 *                shapes (contiguous, strided target, indexed origin); each
 *                origin works on a partner in the other cluster (and on
 *                itself); every byte of every window and every fetched
 *                result is compared with a reference computed here.
 *   rma_allops   every predefined op (MPI_REPLACE, MPI_NO_OP, MAXLOC/MINLOC
 *                included) on int, double and pair types; all ranks
 *                accumulate into one target at once (per-element
 *                atomicity), a fetch-and-op counter and a compare-and-swap
 *                race with exact totals; lock contention at one target
 *                that locks itself too (exclusive and lock_all) and an
 *                exclusive-lock counter from every rank.
 *   rma_windows  the four creation flavours, attach/detach, attributes,
 *                names, groups, user attributes, error handlers.
 *   rma_errors   MPI_ERR_RMA_RANGE at the origin, MPI_ERR_RMA_SYNC for a
 *                wrong epoch, an out-of-window access to a dynamic window
 *                (checked at the target, memory untouched), hostile frames
 *                refused and counted while the target keeps serving.
 *   rma_bounds   a Get of 64 MiB over a stride-0 vector of one-byte blocks
 *                and a forged one of 1 GiB: the target's peak memory stays
 *                within its reply bound, the data is right, the forged one
 *                refused; at 2+2 another origin is served meanwhile.
 *   rma_progress a target computing for 2 s without MPI calls: a Get from
 *                the other cluster completes well before the loop ends.
 *   rma_stream   a stream of accumulates from every rank to rank 0 (the
 *                failover test kills a zipperd meanwhile): exact sum.
 * Prints "PASS <suite> ..." on rank 0. */
#include <math.h>
#include <mmpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest_check.h"

#define W 256 /* ints in each window */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int init_val(int owner, int i) { return owner * 1000 + i; }

/* ---------------------------------------------------------------- shapes */

/* Element positions (ints) a datatype covers, in typemap order. */
enum { NE = 8 };
typedef struct {
  const char* name;
  MPI_Datatype otype, ttype; /* origin count 1 of otype, target count 1 of ttype */
  int opos[NE];              /* origin buffer int index of element k */
  int tpos[NE];              /* target window int index (from disp) of element k */
} Shape;

static void make_shapes(Shape* s) {
  /* contiguous: 8 ints both sides */
  s[0].name = "contig";
  MMPI_Type_contiguous(NE, MPI_INT, &s[0].otype);
  MMPI_Type_commit(&s[0].otype);
  MMPI_Type_contiguous(NE, MPI_INT, &s[0].ttype);
  MMPI_Type_commit(&s[0].ttype);
  for (int k = 0; k < NE; ++k) s[0].opos[k] = s[0].tpos[k] = k;
  /* strided target: 4 blocks of 2 ints, stride 5 */
  s[1].name = "vector";
  MMPI_Type_contiguous(NE, MPI_INT, &s[1].otype);
  MMPI_Type_commit(&s[1].otype);
  MMPI_Type_vector(4, 2, 5, MPI_INT, &s[1].ttype);
  MMPI_Type_commit(&s[1].ttype);
  for (int k = 0; k < NE; ++k) {
    s[1].opos[k] = k;
    s[1].tpos[k] = (k / 2) * 5 + k % 2;
  }
  /* indexed origin (out of order), resized-vector target */
  s[2].name = "indexed";
  int bl[3] = {2, 3, 3}, dp[3] = {10, 0, 5};
  MMPI_Type_indexed(3, bl, dp, MPI_INT, &s[2].otype);
  MMPI_Type_commit(&s[2].otype);
  MPI_Datatype v;
  MMPI_Type_vector(NE, 1, 3, MPI_INT, &v);
  MMPI_Type_create_resized(v, 0, (MPI_Aint)(3 * NE * sizeof(int)), &s[2].ttype);
  MMPI_Type_commit(&s[2].ttype);
  MMPI_Type_free(&v);
  int k = 0;
  for (int b = 0; b < 3; ++b)
    for (int j = 0; j < bl[b]; ++j) s[2].opos[k++] = dp[b] + j;
  for (k = 0; k < NE; ++k) s[2].tpos[k] = 3 * k;
}

/* ------------------------------------------------------------ sync modes */

enum Sync { S_FENCE, S_PSCW, S_LOCK_EXCL, S_LOCK_SHARED, S_LOCK_ALL, S_FLUSH, S_NSYNC };
static const char* sync_name[] = {"fence",       "pscw",     "lock_excl",
                                  "lock_shared", "lock_all", "lock_all_flush"};

static MPI_Group world_group;

static void group_of(int r, MPI_Group* g) { CHECK_MPI(MMPI_Group_incl(world_group, 1, &r, g)); }

/* Opens the access (and exposure) epoch for `target` (and, for PSCW, lets
 * `origin` in). */
static void open_epoch(int mode, MPI_Win win, int target, int origin) {
  MPI_Group tg, og;
  switch (mode) {
    case S_FENCE:
      CHECK_MPI(MMPI_Win_fence(0, win));
      break;
    case S_PSCW:
      group_of(origin, &og);
      group_of(target, &tg);
      CHECK_MPI(MMPI_Win_post(og, 0, win));
      CHECK_MPI(MMPI_Win_start(tg, 0, win));
      MMPI_Group_free(&og);
      MMPI_Group_free(&tg);
      break;
    case S_LOCK_EXCL:
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
      break;
    case S_LOCK_SHARED:
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
      break;
    default:
      CHECK_MPI(MMPI_Win_lock_all(0, win));
      break;
  }
}

static void close_epoch(int mode, MPI_Win win, int target) {
  switch (mode) {
    case S_FENCE:
      CHECK_MPI(MMPI_Win_fence(MPI_MODE_NOSUCCEED, win));
      break;
    case S_PSCW:
      CHECK_MPI(MMPI_Win_complete(win));
      CHECK_MPI(MMPI_Win_wait(win));
      break;
    case S_LOCK_EXCL:
    case S_LOCK_SHARED:
      CHECK_MPI(MMPI_Win_unlock(target, win));
      break;
    case S_LOCK_ALL:
      CHECK_MPI(MMPI_Win_unlock_all(win));
      break;
    default:
      CHECK_MPI(MMPI_Win_flush(target, win));
      CHECK_MPI(MMPI_Win_flush_local(target, win));
      CHECK_MPI(MMPI_Win_flush_all(win));
      CHECK_MPI(MMPI_Win_flush_local_all(win));
      CHECK_MPI(MMPI_Win_unlock_all(win));
      break;
  }
}

/* Sets this rank's window to init_val (under its own exclusive lock). */
static void reset(MPI_Win win, int* mem) {
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  for (int i = 0; i < W; ++i) mem[i] = init_val(rank, i);
  CHECK_MPI(MMPI_Win_unlock(rank, win));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
}

/* --------------------------------------------------------------- rma_ops */

enum Op {
  O_PUT,
  O_GET,
  O_ACC_SUM,
  O_ACC_REPLACE,
  O_GETACC_SUM,
  O_GETACC_NOOP,
  O_FOP,
  O_CAS,
  O_RPUT,
  O_RGET,
  O_RACC,
  O_RGETACC,
  O_NOPS
};
static const char* op_name[] = {"put",        "get",         "acc_sum",      "acc_replace",
                                "getacc_sum", "getacc_noop", "fetch_and_op", "cas",
                                "rput",       "rget",        "raccumulate",  "rget_accumulate"};

static int origin_val(int o, int k) { return (o + 1) * 100 + k + 1; }

/* The expected window of `t` after origin `o` applied `op` with shape `s` at
 * displacement `disp`. */
static void expected_window(int op, const Shape* s, int o, int t, int disp, int* exp) {
  for (int i = 0; i < W; ++i) exp[i] = init_val(t, i);
  if (op == O_GET || op == O_RGET || op == O_GETACC_NOOP) return;
  if (op == O_FOP) {
    exp[disp] += origin_val(o, 0);
    return;
  }
  if (op == O_CAS) {
    exp[disp] = origin_val(o, 0);
    return;
  }
  for (int k = 0; k < NE; ++k) {
    int* x = &exp[disp + s->tpos[k]];
    const int v = origin_val(o, k);
    if (op == O_ACC_SUM || op == O_GETACC_SUM || op == O_RACC || op == O_RGETACC)
      *x += v;
    else
      *x = v;
  }
}

static void run_op(MPI_Win win, int mode, int op, const Shape* s, int t, int disp, int* obuf,
                   int* rbuf) {
  MPI_Request req = MPI_REQUEST_NULL;
  switch (op) {
    case O_PUT:
      CHECK_MPI(MMPI_Put(obuf, 1, s->otype, t, disp, 1, s->ttype, win));
      break;
    case O_GET:
      CHECK_MPI(MMPI_Get(rbuf, 1, s->otype, t, disp, 1, s->ttype, win));
      break;
    case O_ACC_SUM:
      CHECK_MPI(MMPI_Accumulate(obuf, 1, s->otype, t, disp, 1, s->ttype, MPI_SUM, win));
      break;
    case O_ACC_REPLACE:
      CHECK_MPI(MMPI_Accumulate(obuf, 1, s->otype, t, disp, 1, s->ttype, MPI_REPLACE, win));
      break;
    case O_GETACC_SUM:
      CHECK_MPI(MMPI_Get_accumulate(obuf, 1, s->otype, rbuf, 1, s->otype, t, disp, 1, s->ttype,
                                    MPI_SUM, win));
      break;
    case O_GETACC_NOOP:
      CHECK_MPI(MMPI_Get_accumulate(NULL, 0, MPI_INT, rbuf, 1, s->otype, t, disp, 1, s->ttype,
                                    MPI_NO_OP, win));
      break;
    case O_FOP:
      CHECK_MPI(MMPI_Fetch_and_op(&obuf[s->opos[0]], rbuf, MPI_INT, t, disp, MPI_SUM, win));
      break;
    case O_CAS: {
      const int compare = init_val(t, disp);
      CHECK_MPI(MMPI_Compare_and_swap(&obuf[s->opos[0]], &compare, rbuf, MPI_INT, t, disp, win));
      break;
    }
    case O_RPUT:
      CHECK_MPI(MMPI_Rput(obuf, 1, s->otype, t, disp, 1, s->ttype, win, &req));
      break;
    case O_RGET:
      CHECK_MPI(MMPI_Rget(rbuf, 1, s->otype, t, disp, 1, s->ttype, win, &req));
      break;
    case O_RACC:
      CHECK_MPI(MMPI_Raccumulate(obuf, 1, s->otype, t, disp, 1, s->ttype, MPI_SUM, win, &req));
      break;
    case O_RGETACC:
      CHECK_MPI(MMPI_Rget_accumulate(obuf, 1, s->otype, rbuf, 1, s->otype, t, disp, 1, s->ttype,
                                     MPI_SUM, win, &req));
      break;
  }
  if (req != MPI_REQUEST_NULL) CHECK_MPI(MMPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void suite_ops(void) {
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(
      MMPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MMPI_COMM_WORLD, &mem, &win));
  Shape shapes[3];
  make_shapes(shapes);
  int obuf[32], rbuf[32], exp[W];
  /* Partner: the same index in the other cluster where there is one; with
   * x != y some ranks pair inside their cluster. Two passes: partner, self. */
  const int partner = (rank + size / 2) % size;
  for (int pass = 0; pass < 2; ++pass) {
    const int t = pass == 0 ? partner : rank;
    const int o = pass == 0 ? (rank - size / 2 + size) % size : rank; /* who targets me */
    for (int mode = 0; mode < S_NSYNC; ++mode)
      for (int op = 0; op < O_NOPS; ++op) {
        /* Request-based operations belong to passive-target epochs. */
        if (op >= O_RPUT && mode != S_LOCK_EXCL && mode != S_LOCK_SHARED && mode < S_LOCK_ALL)
          continue;
        for (int si = 0; si < 3; ++si) {
          const Shape* s = &shapes[si];
          CASE("rma_ops %s %s %s -> %d", sync_name[mode], op_name[op], s->name, t);
          const int disp = 7 + 13 * si;
          reset(win, mem);
          for (int i = 0; i < 32; ++i) obuf[i] = -1, rbuf[i] = -7;
          for (int k = 0; k < NE; ++k) obuf[s->opos[k]] = origin_val(rank, k);
          open_epoch(mode, win, t, o);
          run_op(win, mode, op, s, t, disp, obuf, rbuf);
          close_epoch(mode, win, t);
          CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
          /* the target's whole window */
          expected_window(op, s, o, rank, disp, exp);
          CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
          for (int i = 0; i < W; ++i)
            EXPECT(mem[i] == exp[i], "window[%d] = %d, expected %d (origin %d)", i, mem[i], exp[i],
                   o);
          CHECK_MPI(MMPI_Win_unlock(rank, win));
          /* the origin's fetched results: the target's old values */
          if (op == O_GET || op == O_RGET || op == O_GETACC_SUM || op == O_GETACC_NOOP ||
              op == O_RGETACC) {
            for (int k = 0; k < NE; ++k)
              EXPECT(rbuf[s->opos[k]] == init_val(t, disp + s->tpos[k]),
                     "result element %d = %d, expected %d", k, rbuf[s->opos[k]],
                     init_val(t, disp + s->tpos[k]));
            for (int i = 0; i < 32; ++i) {
              int covered = 0;
              for (int k = 0; k < NE; ++k) covered |= s->opos[k] == i;
              EXPECT(covered || rbuf[i] == -7, "result buffer hole %d overwritten: %d", i, rbuf[i]);
            }
          } else if (op == O_FOP || op == O_CAS) {
            EXPECT(rbuf[0] == init_val(t, disp), "fetched %d, expected %d", rbuf[0],
                   init_val(t, disp));
          }
          CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
        }
      }
  }
  for (int si = 0; si < 3; ++si) {
    MMPI_Type_free(&shapes[si].otype);
    MMPI_Type_free(&shapes[si].ttype);
  }
  CHECK_MPI(MMPI_Win_free(&win));
}

/* ------------------------------------------------------------ rma_allops */

static int ref_int(MPI_Op op, int a, int b) { /* a: target, b: origin */
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_SUM) return a + b;
  if (op == MPI_PROD) return a * b;
  if (op == MPI_BAND) return a & b;
  if (op == MPI_BOR) return a | b;
  if (op == MPI_BXOR) return a ^ b;
  if (op == MPI_LAND) return a && b;
  if (op == MPI_LOR) return a || b;
  if (op == MPI_LXOR) return !a != !b;
  if (op == MPI_REPLACE) return b;
  return a; /* MPI_NO_OP */
}

static void lock_contention(void);
static int err_class(int rc);

static void suite_allops(void) {
  /* Every rank accumulates into rank 0's window at once; rank 0 checks the
   * result against the reference folded over all origins. */
  MPI_Op ops[] = {MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD, MPI_BAND, MPI_BOR,
                  MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_NO_OP};
  const char* names[] = {"MAX",  "MIN",  "SUM", "PROD", "BAND", "BOR",
                         "BXOR", "LAND", "LOR", "LXOR", "NO_OP"};
  enum { N = 16 };
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MMPI_Win_allocate(4096, 1, MPI_INFO_NULL, MMPI_COMM_WORLD, &mem, &win));
  for (int oi = 0; oi < (int)(sizeof ops / sizeof ops[0]); ++oi) {
    CASE("rma_allops int %s", names[oi]);
    if (rank == 0) {
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      for (int i = 0; i < N; ++i) mem[i] = (i % 3) + 1;
      CHECK_MPI(MMPI_Win_unlock(0, win));
    }
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
    int v[N];
    for (int i = 0; i < N; ++i) v[i] = ops[oi] == MPI_PROD ? 1 + (rank + i) % 2 : rank * 7 + i;
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    if (ops[oi] == MPI_NO_OP) {
      /* MPI_NO_OP is for Get_accumulate and Fetch_and_op only: Accumulate
       * answers MPI_ERR_OP (as Open MPI does) and sends nothing; a
       * Get_accumulate with it reads the target's elements untouched. */
      int got[N];
      CHECK_MPI(MMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
      EXPECT(
          err_class(MMPI_Accumulate(v, N, MPI_INT, 0, 0, N, MPI_INT, MPI_NO_OP, win)) == MPI_ERR_OP,
          "MPI_Accumulate with MPI_NO_OP: not MPI_ERR_OP");
      CHECK_MPI(MMPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
      CHECK_MPI(
          MMPI_Get_accumulate(NULL, 0, MPI_INT, got, N, MPI_INT, 0, 0, N, MPI_INT, MPI_NO_OP, win));
      CHECK_MPI(MMPI_Win_flush(0, win));
      for (int i = 0; i < N; ++i)
        EXPECT(got[i] == (i % 3) + 1, "NO_OP read [%d] = %d, expected %d", i, got[i], (i % 3) + 1);
    } else {
      CHECK_MPI(MMPI_Accumulate(v, N, MPI_INT, 0, 0, N, MPI_INT, ops[oi], win));
    }
    CHECK_MPI(MMPI_Win_unlock(0, win));
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
    if (rank == 0) {
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      for (int i = 0; i < N; ++i) {
        /* Every op here is commutative and associative: any order of origins. */
        int r = (i % 3) + 1;
        for (int o = 0; o < size; ++o)
          r = ref_int(ops[oi], r, ops[oi] == MPI_PROD ? 1 + (o + i) % 2 : o * 7 + i);
        EXPECT(mem[i] == r, "element %d = %d, expected %d", i, mem[i], r);
      }
      CHECK_MPI(MMPI_Win_unlock(0, win));
    }
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  }

  /* doubles: SUM and MAX from everyone, values exact in binary */
  CASE("rma_allops double SUM/MAX");
  double* d = (double*)mem;
  if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    for (int i = 0; i < 2 * N; ++i) d[i] = 0.5;
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  double dv[N];
  for (int i = 0; i < N; ++i) dv[i] = rank + i * 0.25;
  CHECK_MPI(MMPI_Win_lock_all(0, win));
  CHECK_MPI(MMPI_Accumulate(dv, N, MPI_DOUBLE, 0, 0, N, MPI_DOUBLE, MPI_SUM, win));
  CHECK_MPI(MMPI_Accumulate(dv, N, MPI_DOUBLE, 0, N * sizeof(double), N, MPI_DOUBLE, MPI_MAX, win));
  CHECK_MPI(MMPI_Win_unlock_all(win));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int i = 0; i < N; ++i) {
      double s = 0.5, m = 0.5;
      for (int o = 0; o < size; ++o) {
        s += o + i * 0.25;
        if (o + i * 0.25 > m) m = o + i * 0.25;
      }
      EXPECT(d[i] == s, "sum[%d] = %g, expected %g", i, d[i], s);
      EXPECT(d[N + i] == m, "max[%d] = %g, expected %g", i, d[N + i], m);
    }
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));

  /* MAXLOC / MINLOC on MPI_2INT pairs (value, index) */
  CASE("rma_allops MAXLOC/MINLOC");
  if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    mem[0] = -1, mem[1] = -1, mem[2] = 1 << 20, mem[3] = -1;
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  int pair[2] = {(rank * 37) % 11, rank};
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  CHECK_MPI(MMPI_Accumulate(pair, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MAXLOC, win));
  CHECK_MPI(MMPI_Accumulate(pair, 1, MPI_2INT, 0, 8, 1, MPI_2INT, MPI_MINLOC, win));
  CHECK_MPI(MMPI_Win_unlock(0, win));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == 0) {
    int mx = -1, mxi = -1, mn = 1 << 20, mni = -1;
    for (int o = 0; o < size; ++o) {
      const int v = (o * 37) % 11;
      if (v > mx || (v == mx && o < mxi)) mx = v, mxi = o;
      if (v < mn || (v == mn && o < mni)) mn = v, mni = o;
    }
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT(mem[0] == mx && mem[1] == mxi, "MAXLOC (%d,%d), expected (%d,%d)", mem[0], mem[1], mx,
           mxi);
    EXPECT(mem[2] == mn && mem[3] == mni, "MINLOC (%d,%d), expected (%d,%d)", mem[2], mem[3], mn,
           mni);
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));

  /* A shared counter: every rank takes 50 tickets with fetch-and-op; all
   * tickets distinct, the counter ends at 50 x size. Then a compare-and-swap
   * race: exactly one rank wins each round. */
  CASE("rma_allops counter");
  if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    mem[0] = 0, mem[1] = -1;
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  enum { T = 50 };
  int tickets[T], one = 1;
  CHECK_MPI(MMPI_Win_lock_all(0, win));
  for (int i = 0; i < T; ++i) {
    CHECK_MPI(MMPI_Fetch_and_op(&one, &tickets[i], MPI_INT, 0, 0, MPI_SUM, win));
    CHECK_MPI(MMPI_Win_flush(0, win));
  }
  int minus1 = -1, old = 0, wins = 0;
  CHECK_MPI(MMPI_Compare_and_swap(&rank, &minus1, &old, MPI_INT, 0, sizeof(int), win));
  CHECK_MPI(MMPI_Win_unlock_all(win));
  wins = old == -1;
  int* all = malloc(sizeof(int) * T * size);
  CHECK_MPI(MMPI_Gather(tickets, T, MPI_INT, all, T, MPI_INT, 0, MMPI_COMM_WORLD));
  int total_wins = 0;
  CHECK_MPI(MMPI_Reduce(&wins, &total_wins, 1, MPI_INT, MPI_SUM, 0, MMPI_COMM_WORLD));
  if (rank == 0) {
    char* seen = calloc(T * size, 1);
    for (int i = 0; i < T * size; ++i) {
      EXPECT(all[i] >= 0 && all[i] < T * size && !seen[all[i]],
             "ticket %d repeated or out of range", all[i]);
      seen[all[i]] = 1;
    }
    free(seen);
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT(mem[0] == T * size, "counter %d, expected %d", mem[0], T * size);
    EXPECT(mem[1] >= 0 && mem[1] < size, "CAS winner %d", mem[1]);
    CHECK_MPI(MMPI_Win_unlock(0, win));
    EXPECT(total_wins == 1, "%d ranks won the compare-and-swap", total_wins);
  }
  free(all);
  CHECK_MPI(MMPI_Win_free(&win));
  lock_contention();
}

/* Lock contention at one target, rank 0, which also locks itself. Its own
 * lock request must wait while another origin holds the lock, not be
 * dropped (it was, after the lazy-lock change: rank 0 then waited forever
 * for its grant, MPICH rma/lockcontention2 at 1+2). */
static void lock_contention(void) {
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(
      MMPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MMPI_COMM_WORLD, &mem, &win));
  const int holder = size - 1; /* in the other cluster */
  for (int all = 0; all < 2; ++all) {
    CASE("rma_allops lock on oneself while rank %d holds it (%s)", holder,
         all ? "lock_all" : "exclusive");
    if (rank == 0) {
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      mem[0] = mem[1] = 0;
      CHECK_MPI(MMPI_Win_unlock(0, win));
    }
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
    if (rank == holder) {
      int x = 1;
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      CHECK_MPI(MMPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
      CHECK_MPI(MMPI_Win_flush(0, win)); /* granted at the target now */
      CHECK_MPI(MMPI_Send(&x, 1, MPI_INT, 0, 7, MMPI_COMM_WORLD));
      struct timespec ts = {0, 50 * 1000 * 1000};
      nanosleep(&ts, NULL); /* rank 0's lock request arrives meanwhile */
      x = 2;
      CHECK_MPI(MMPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
      CHECK_MPI(MMPI_Win_unlock(0, win));
    } else if (rank == 0) {
      int x = 0;
      CHECK_MPI(MMPI_Recv(&x, 1, MPI_INT, holder, 7, MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
      if (all)
        CHECK_MPI(MMPI_Win_lock_all(0, win));
      else
        CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      /* granted only after the holder's unlock: its last put is there */
      EXPECT(mem[0] == 2, "window holds %d under my lock, expected 2", mem[0]);
      if (all)
        CHECK_MPI(MMPI_Win_unlock_all(win));
      else
        CHECK_MPI(MMPI_Win_unlock(0, win));
    }
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  }
  /* A counter incremented K times by every rank under exclusive locks, by
   * get + put from the others and by load/store on rank 0: exact only if
   * the locks exclude each other. */
  CASE("rma_allops exclusive-lock counter");
  enum { K = 40 };
  for (int k = 0; k < K; ++k) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    if (rank == 0) {
      ++mem[1];
    } else {
      int v = -1;
      CHECK_MPI(MMPI_Get(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
      CHECK_MPI(MMPI_Win_flush(0, win));
      ++v;
      CHECK_MPI(MMPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
    }
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT(mem[1] == K * size, "counter %d, expected %d", mem[1], K * size);
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Win_free(&win));
}

/* ----------------------------------------------------------- rma_windows */

static int delete_calls;
static int count_delete(MPI_Win w, int k, void* v, void* extra) {
  (void)w, (void)k, (void)v, (void)extra;
  ++delete_calls;
  return MPI_SUCCESS;
}

static void check_attrs(MPI_Win win, void* base, MPI_Aint sz, int du, int flavor) {
  void* v;
  int flag;
  CHECK_MPI(MMPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
  EXPECT(flag && v == base, "MPI_WIN_BASE %p, expected %p", v, base);
  CHECK_MPI(MMPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
  EXPECT(flag && *(MPI_Aint*)v == sz, "MPI_WIN_SIZE %ld", (long)*(MPI_Aint*)v);
  CHECK_MPI(MMPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
  EXPECT(flag && *(int*)v == du, "MPI_WIN_DISP_UNIT %d", *(int*)v);
  CHECK_MPI(MMPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
  EXPECT(flag && *(int*)v == flavor, "MPI_WIN_CREATE_FLAVOR %d", *(int*)v);
  CHECK_MPI(MMPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
  EXPECT(flag && (*(int*)v == MPI_WIN_SEPARATE || *(int*)v == MPI_WIN_UNIFIED), "MPI_WIN_MODEL %d",
         *(int*)v);
}

static void suite_windows(void) {
  const int partner = (rank + size / 2) % size;
  /* create, with a user buffer */
  CASE("rma_windows create");
  long long buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = rank;
  MPI_Win win;
  CHECK_MPI(
      MMPI_Win_create(buf, sizeof buf, sizeof(long long), MPI_INFO_NULL, MMPI_COMM_WORLD, &win));
  check_attrs(win, buf, sizeof buf, sizeof(long long), MPI_WIN_FLAVOR_CREATE);
  CHECK_MPI(MMPI_Win_set_name(win, "rma-test-window"));
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK_MPI(MMPI_Win_get_name(win, name, &len));
  EXPECT(strcmp(name, "rma-test-window") == 0, "name '%s'", name);
  MPI_Group g, wg;
  CHECK_MPI(MMPI_Win_get_group(win, &g));
  CHECK_MPI(MMPI_Comm_group(MMPI_COMM_WORLD, &wg));
  int cmp;
  CHECK_MPI(MMPI_Group_compare(g, wg, &cmp));
  EXPECT(cmp == MPI_IDENT, "window group compares %d to the world's", cmp);
  MMPI_Group_free(&g);
  MMPI_Group_free(&wg);
  int key;
  CHECK_MPI(MMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL));
  CHECK_MPI(MMPI_Win_set_attr(win, key, &buf[3]));
  void* v;
  int flag;
  CHECK_MPI(MMPI_Win_get_attr(win, key, &v, &flag));
  EXPECT(flag && v == &buf[3], "user attribute");
  long long val = 1000 + rank, got = -1;
  CHECK_MPI(MMPI_Win_fence(0, win));
  CHECK_MPI(MMPI_Put(&val, 1, MPI_LONG_LONG, partner, 5, 1, MPI_LONG_LONG, win));
  CHECK_MPI(MMPI_Win_fence(0, win));
  CHECK_MPI(MMPI_Get(&got, 1, MPI_LONG_LONG, partner, 5, 1, MPI_LONG_LONG, win));
  CHECK_MPI(MMPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  const int from = (rank - size / 2 + size) % size;
  EXPECT(buf[5] == 1000 + from, "buf[5] = %lld, expected %d", buf[5], 1000 + from);
  EXPECT(got == 1000 + rank, "got %lld", got);
  CHECK_MPI(MMPI_Win_free(&win));
  EXPECT(win == MPI_WIN_NULL, "MPI_Win_free leaves the handle");
  EXPECT(delete_calls == 1, "attribute delete callback ran %d times", delete_calls);
  MMPI_Win_free_keyval(&key);

  /* create_dynamic: attach two regions, access by address */
  CASE("rma_windows dynamic");
  CHECK_MPI(MMPI_Win_create_dynamic(MPI_INFO_NULL, MMPI_COMM_WORLD, &win));
  int r1[8], r2[8];
  for (int i = 0; i < 8; ++i) r1[i] = r2[i] = -1;
  CHECK_MPI(MMPI_Win_attach(win, r1, sizeof r1));
  CHECK_MPI(MMPI_Win_attach(win, r2, sizeof r2));
  MPI_Aint mine[2], theirs[2];
  CHECK_MPI(MMPI_Get_address(r1, &mine[0]));
  CHECK_MPI(MMPI_Get_address(r2, &mine[1]));
  CHECK_MPI(MMPI_Sendrecv(mine, 2, MPI_AINT, from, 3, theirs, 2, MPI_AINT, partner, 3,
                          MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
  check_attrs(win, NULL, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
  int src[8];
  for (int i = 0; i < 8; ++i) src[i] = rank * 10 + i;
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, win));
  CHECK_MPI(MMPI_Put(src, 8, MPI_INT, partner, theirs[0], 8, MPI_INT, win));
  CHECK_MPI(MMPI_Accumulate(src, 8, MPI_INT, partner, theirs[1], 8, MPI_INT, MPI_SUM, win));
  CHECK_MPI(MMPI_Win_unlock(partner, win));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  for (int i = 0; i < 8; ++i) {
    EXPECT(r1[i] == from * 10 + i, "r1[%d] = %d", i, r1[i]);
    EXPECT(r2[i] == from * 10 + i - 1, "r2[%d] = %d", i, r2[i]);
  }
  CHECK_MPI(MMPI_Win_detach(win, r1));
  CHECK_MPI(MMPI_Win_detach(win, r2));

  /* Two regions attached end to end are one range: one put and one
   * get-accumulate across the seam (MPICH's win_dynamic_rma_flush_get
   * -count=9216 does this and was refused). */
  CASE("rma_windows dynamic adjacent regions");
  int seam[16], seam_src[16], seam_old[16];
  for (int i = 0; i < 16; ++i) seam[i] = -1;
  CHECK_MPI(MMPI_Win_attach(win, seam, 8 * sizeof(int)));
  CHECK_MPI(MMPI_Win_attach(win, seam + 8, 8 * sizeof(int)));
  CHECK_MPI(MMPI_Get_address(seam, &mine[0]));
  CHECK_MPI(MMPI_Sendrecv(mine, 1, MPI_AINT, from, 5, theirs, 1, MPI_AINT, partner, 5,
                          MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  for (int i = 0; i < 16; ++i) seam_src[i] = rank * 100 + i;
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, win));
  CHECK_MPI(
      MMPI_Put(seam_src, 12, MPI_INT, partner, theirs[0] + 2 * sizeof(int), 12, MPI_INT, win));
  CHECK_MPI(MMPI_Win_flush(partner, win));
  CHECK_MPI(MMPI_Get_accumulate(seam_src, 16, MPI_INT, seam_old, 16, MPI_INT, partner, theirs[0],
                                16, MPI_INT, MPI_SUM, win));
  CHECK_MPI(MMPI_Win_unlock(partner, win));
  for (int i = 0; i < 16; ++i) {
    const int put = (i >= 2 && i < 14) ? rank * 100 + i - 2 : -1;
    EXPECT(seam_old[i] == put, "seam get_accumulate old[%d] = %d, expected %d", i, seam_old[i],
           put);
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  for (int i = 0; i < 16; ++i) {
    const int put = (i >= 2 && i < 14) ? from * 100 + i - 2 : -1;
    EXPECT(seam[i] == put + from * 100 + i, "seam[%d] = %d, expected %d", i, seam[i],
           put + from * 100 + i);
  }
  CHECK_MPI(MMPI_Win_detach(win, seam));
  CHECK_MPI(MMPI_Win_detach(win, seam + 8));
  CHECK_MPI(MMPI_Win_free(&win));

  /* Win_get_info reports the hints in effect: zipper uses none of the
   * user's promises, so no_locks=true still leaves locks working and the
   * ordering is the strongest whatever was asked; unknown keys are dropped. */
  CASE("rma_windows info");
  MPI_Info hints, used;
  CHECK_MPI(MMPI_Info_create(&hints));
  CHECK_MPI(MMPI_Info_set(hints, "no_locks", "true"));
  CHECK_MPI(MMPI_Info_set(hints, "accumulate_ordering", "none"));
  CHECK_MPI(MMPI_Info_set(hints, "same_size", "true"));
  CHECK_MPI(MMPI_Info_set(hints, "zipper_test_key", "x"));
  int* im = NULL;
  CHECK_MPI(MMPI_Win_allocate(4 * sizeof(int), sizeof(int), hints, MMPI_COMM_WORLD, &im, &win));
  CHECK_MPI(MMPI_Info_free(&hints));
  CHECK_MPI(MMPI_Win_get_info(win, &used));
  /* Open MPI alone (the unported build run without the layer) answers its own */
  int (*volatile zipper_layer)(int*, int*, int*) = MMPIX_Layout;
  static const char* const want[][2] = {{"no_locks", "false"},
                                        {"accumulate_ordering", "rar,raw,war,waw"},
                                        {"accumulate_ops", "same_op_no_op"},
                                        {"same_size", "false"},
                                        {"alloc_shared_noncontig", "false"}};
  for (int k = 0; k < 5; ++k) {
    char hv[64] = "";
    int hflag = 0;
    CHECK_MPI(MMPI_Info_get(used, want[k][0], 63, hv, &hflag));
    if (zipper_layer != NULL)
      EXPECT(hflag && strcmp(hv, want[k][1]) == 0, "info %s = '%s' (flag %d), expected '%s'",
             want[k][0], hv, hflag, want[k][1]);
  }
  int nkeys = 0, unknown = 0;
  CHECK_MPI(MMPI_Info_get_nkeys(used, &nkeys));
  char uv[8];
  CHECK_MPI(MMPI_Info_get(used, "zipper_test_key", 7, uv, &unknown));
  if (zipper_layer != NULL)
    EXPECT(nkeys == 5 && !unknown, "info: %d keys, unknown key %s", nkeys,
           unknown ? "returned" : "dropped");
  CHECK_MPI(MMPI_Info_free(&used));
  im[0] = -1;
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, win)); /* no_locks not honoured */
  const int one = rank + 1;
  CHECK_MPI(MMPI_Put(&one, 1, MPI_INT, partner, 0, 1, MPI_INT, win));
  CHECK_MPI(MMPI_Win_unlock(partner, win));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  EXPECT(im[0] == from + 1, "put under no_locks=true: %d, expected %d", im[0], from + 1);
  CHECK_MPI(MMPI_Win_free(&win));

  /* allocate_shared: where every member is on one node (MMPI_COMM_SELF
   * always is); across the clusters a clear error */
  CASE("rma_windows shared");
  int* sh = NULL;
  CHECK_MPI(MMPI_Win_allocate_shared(64, 4, MPI_INFO_NULL, MMPI_COMM_SELF, &sh, &win));
  MPI_Aint qs;
  int qd;
  int* qb = NULL;
  CHECK_MPI(MMPI_Win_shared_query(win, 0, &qs, &qd, &qb));
  EXPECT(qb == sh && qs == 64 && qd == 4, "shared query %p %ld %d", (void*)qb, (long)qs, qd);
  check_attrs(win, sh, 64, 4, MPI_WIN_FLAVOR_SHARED);
  CHECK_MPI(MMPI_Win_free(&win));
  int lo = size, hi = 0;
  int (*volatile layout)(int*, int*, int*) = MMPIX_Layout; /* weak when unported */
  if (layout != NULL) layout(&lo, &hi, NULL);
  if (lo > 0 && hi > 0) { /* both clusters */
    MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MMPI_Win_allocate_shared(64, 4, MPI_INFO_NULL, MMPI_COMM_WORLD, &sh, &win);
    int cls = 0;
    MMPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_RMA_SHARED, "allocate_shared across the clusters: class %d", cls);
    MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
}

/* ------------------------------------------------------------ rma_errors */

static int handler_calls, handler_code;
static MPI_Win handler_win;
static void on_win_error(MPI_Win* w, int* code, ...) {
  ++handler_calls;
  handler_code = *code;
  handler_win = *w;
}

static int err_class(int rc) {
  int c = rc;
  MMPI_Error_class(rc, &c);
  return c;
}

/* Sends a request frame (client/rma_wire.h) of `kind` (1 put, 3 accumulate,
 * 4 get-accumulate) with op and element type table indexes `op` and `elem`
 * (client/rma_types.cpp), whose target datatype is the `n` description
 * records at `nodes` (client/rma_typemap.h), for packed bytes
 * [first, first + bytes) at displacement `disp`, with `data_len` bytes of
 * data; a reply asked for with tag frame_reply_tag when it is not 0.
 * Returns 1 (one frame to be refused). */
static int32_t frame_reply_tag; /* 0: send_frame asks for no reply */
static int send_frame(MPI_Comm wc, int dest, int kind, int op, int elem, const void* nodes, int n,
                      int64_t disp, uint64_t first, uint64_t bytes, uint64_t data_len) {
  struct {
    uint32_t magic;
    uint8_t kind, op;
    int16_t elem;
    uint8_t flags, pad[3];
    int32_t reply_tag;
    uint32_t nnodes;
    int64_t disp;
    uint64_t data_len, first, bytes;
  } h;
  memset(&h, 0, sizeof h);
  h.magic = 0x5A524D41;
  h.kind = (uint8_t)kind;
  h.op = (uint8_t)op;
  h.elem = (int16_t)elem;
  h.reply_tag = frame_reply_tag;
  h.nnodes = (uint32_t)n;
  h.disp = disp;
  h.data_len = data_len;
  h.first = first;
  h.bytes = bytes;
  const size_t len = sizeof h + (size_t)n * 40 + data_len;
  unsigned char* f = calloc(len, 1);
  memcpy(f, &h, sizeof h);
  memcpy(f + sizeof h, nodes, (size_t)n * 40);
  memset(f + sizeof h + (size_t)n * 40, 0x5a, data_len);
  CHECK_MPI(MMPI_Send(f, (int)len, MPI_BYTE, dest, 1, wc));
  free(f);
  return 1;
}

/* A put frame (see send_frame). */
static int send_hostile(MPI_Comm wc, int dest, const void* nodes, int n, int64_t disp,
                        uint64_t first, uint64_t bytes, uint64_t data_len) {
  return send_frame(wc, dest, 1, 0, 0, nodes, n, disp, first, bytes, data_len);
}

/* One accumulate (or request form) with a datatype/op pair MPI rejects, from
 * an honest origin: `want` (the error class native MPI returns) comes back
 * and the window's error handler sees it. */
static void expect_refused(int rc, int want, const char* what) {
  EXPECT(err_class(rc) == want, "%s: error class %d, expected %d", what, err_class(rc), want);
  EXPECT(handler_calls == 1 && err_class(handler_code) == want,
         "%s: the window's handler saw %d calls, class %d", what, handler_calls,
         err_class(handler_code));
  handler_calls = 0;
}

static void suite_errors(void) {
  const int partner = (rank + size / 2) % size;
  int* mem = NULL;
  MPI_Win win;
  CHECK_MPI(
      MMPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MMPI_COMM_WORLD, &mem, &win));
  CHECK_MPI(MMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  reset(win, mem);
  int v[4] = {1, 2, 3, 4};

  CASE("rma_errors sync");
  EXPECT(err_class(MMPI_Put(v, 1, MPI_INT, partner, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC,
         "put outside any epoch");
  EXPECT(err_class(MMPI_Win_unlock(partner, win)) == MPI_ERR_RMA_SYNC, "unlock without lock");
  EXPECT(err_class(MMPI_Win_flush(partner, win)) == MPI_ERR_RMA_SYNC, "flush without lock");
  EXPECT(err_class(MMPI_Win_complete(win)) == MPI_ERR_RMA_SYNC, "complete without start");
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, partner, 0, win));
  EXPECT(err_class(MMPI_Win_lock(MPI_LOCK_SHARED, partner, 0, win)) == MPI_ERR_RMA_SYNC,
         "lock twice");
  EXPECT(err_class(MMPI_Win_free(&win)) == MPI_ERR_RMA_SYNC && win != MPI_WIN_NULL,
         "free inside an epoch");

  CASE("rma_errors range");
  EXPECT(err_class(MMPI_Put(v, 4, MPI_INT, partner, W - 2, 4, MPI_INT, win)) == MPI_ERR_RMA_RANGE,
         "put past the end");
  EXPECT(err_class(MMPI_Get(v, 1, MPI_INT, partner, -1, 1, MPI_INT, win)) == MPI_ERR_RMA_RANGE,
         "get before the start");
  EXPECT(err_class(MMPI_Accumulate(v, 1, MPI_INT, partner, W, 1, MPI_INT, MPI_SUM, win)) ==
             MPI_ERR_RMA_RANGE,
         "accumulate at the end");
  int huge = 0;
  EXPECT(err_class(MMPI_Fetch_and_op(v, &huge, MPI_INT, partner, (MPI_Aint)1 << 40, MPI_SUM,
                                     win)) == MPI_ERR_RMA_RANGE,
         "fetch-and-op far away");
  CHECK_MPI(MMPI_Win_unlock(partner, win));

  CASE("rma_errors handler");
  MPI_Errhandler eh;
  CHECK_MPI(MMPI_Win_create_errhandler(on_win_error, &eh));
  CHECK_MPI(MMPI_Win_set_errhandler(win, eh));
  MMPI_Errhandler_free(&eh);
  const int rc = MMPI_Win_unlock(partner, win);
  EXPECT(handler_calls == 1 && handler_win == win && err_class(handler_code) == MPI_ERR_RMA_SYNC &&
             err_class(rc) == MPI_ERR_RMA_SYNC,
         "user handler: %d calls, code class %d", handler_calls, err_class(handler_code));
  MPI_Errhandler cur;
  CHECK_MPI(MMPI_Win_get_errhandler(win, &cur));
  CHECK_MPI(MMPI_Win_call_errhandler(win, MPI_ERR_RMA_RANGE));
  EXPECT(handler_calls == 2 && err_class(handler_code) == MPI_ERR_RMA_RANGE, "call_errhandler");
  MMPI_Errhandler_free(&cur);
  CHECK_MPI(MMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

  /* Datatype/op pairs MPI rejects (MPI-3.1 5.9.2, as Open MPI checks them),
   * one of each kind: refused at the origin with native MPI's error class
   * through the window's handler; nothing reaches the target, whose window
   * stays as it was (checked after the hostile frames below) and which keeps
   * serving. */
  CASE("rma_errors op pairs");
  {
    MPI_Errhandler peh;
    CHECK_MPI(MMPI_Win_create_errhandler(on_win_error, &peh));
    CHECK_MPI(MMPI_Win_set_errhandler(win, peh));
    MMPI_Errhandler_free(&peh);
    handler_calls = 0;
    float f[4] = {1, 2, 3, 4}, fr[4];
    double d[2] = {1, 2}, dr[2];
    int iv[4] = {1, 2, 3, 4}, ir[4];
    double _Complex z[2] = {1, 2};
    _Bool b[4] = {1, 0, 1, 0};
    MPI_Datatype fvec; /* a derived type of floats: 2 blocks of 1, stride 2 */
    CHECK_MPI(MMPI_Type_vector(2, 1, 2, MPI_FLOAT, &fvec));
    CHECK_MPI(MMPI_Type_commit(&fvec));
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, partner, 0, win));
    expect_refused(MMPI_Accumulate(f, 4, MPI_FLOAT, partner, 0, 4, MPI_FLOAT, MPI_BAND, win),
                   MPI_ERR_OP, "float BAND");
    expect_refused(MMPI_Accumulate(d, 2, MPI_DOUBLE, partner, 0, 2, MPI_DOUBLE, MPI_LOR, win),
                   MPI_ERR_OP, "double LOR");
    expect_refused(MMPI_Accumulate(iv, 4, MPI_INT, partner, 0, 4, MPI_INT, MPI_MAXLOC, win),
                   MPI_ERR_OP, "int MAXLOC");
    expect_refused(MMPI_Accumulate(iv, 2, MPI_2INT, partner, 0, 2, MPI_2INT, MPI_SUM, win),
                   MPI_ERR_OP, "2INT SUM");
    expect_refused(MMPI_Accumulate(z, 2, MPI_C_DOUBLE_COMPLEX, partner, 0, 2, MPI_C_DOUBLE_COMPLEX,
                                   MPI_MAX, win),
                   MPI_ERR_OP, "complex MAX");
    expect_refused(MMPI_Accumulate(b, 4, MPI_C_BOOL, partner, 0, 4, MPI_C_BOOL, MPI_SUM, win),
                   MPI_ERR_OP, "bool SUM");
    expect_refused(MMPI_Accumulate(f, 2, MPI_FLOAT, partner, 0, 1, fvec, MPI_BXOR, win), MPI_ERR_OP,
                   "vector of floats BXOR");
    expect_refused(MMPI_Get_accumulate(f, 4, MPI_FLOAT, fr, 4, MPI_FLOAT, partner, 0, 4, MPI_FLOAT,
                                       MPI_BOR, win),
                   MPI_ERR_OP, "get-accumulate float BOR");
    expect_refused(MMPI_Fetch_and_op(d, dr, MPI_DOUBLE, partner, 0, MPI_BAND, win), MPI_ERR_OP,
                   "fetch-and-op double BAND");
    MPI_Request rq = MPI_REQUEST_NULL;
    expect_refused(MMPI_Raccumulate(f, 4, MPI_FLOAT, partner, 0, 4, MPI_FLOAT, MPI_LXOR, win, &rq),
                   MPI_ERR_OP, "request form float LXOR");
    EXPECT(rq == MPI_REQUEST_NULL, "a refused request form returns no request");
    /* MPI_NO_OP is for Get_accumulate and Fetch_and_op only (Open MPI 4.1:
     * MPI_ERR_OP from MPI_Accumulate and MPI_Raccumulate) */
    expect_refused(MMPI_Accumulate(iv, 4, MPI_INT, partner, 0, 4, MPI_INT, MPI_NO_OP, win),
                   MPI_ERR_OP, "accumulate NO_OP");
    rq = MPI_REQUEST_NULL;
    expect_refused(MMPI_Raccumulate(iv, 4, MPI_INT, partner, 0, 4, MPI_INT, MPI_NO_OP, win, &rq),
                   MPI_ERR_OP, "request form NO_OP");
    EXPECT(rq == MPI_REQUEST_NULL, "a refused NO_OP request form returns no request");
    /* origin built from int, target from float: not one element type */
    expect_refused(MMPI_Accumulate(iv, 4, MPI_INT, partner, 0, 4, MPI_FLOAT, MPI_SUM, win),
                   MPI_ERR_ARG, "int onto float SUM");
    /* MPI_NO_OP reads any predefined type, pairs included */
    CHECK_MPI(MMPI_Get_accumulate(NULL, 0, MPI_2INT, ir, 2, MPI_2INT, partner, 0, 2, MPI_2INT,
                                  MPI_NO_OP, win));
    CHECK_MPI(MMPI_Win_unlock(partner, win));
    for (int i = 0; i < 4; ++i)
      EXPECT(ir[i] == init_val(partner, i), "no-op read [%d] = %d", i, ir[i]);
    EXPECT(handler_calls == 0, "the window's handler called %d times for allowed calls",
           handler_calls);
    MMPI_Type_free(&fvec);
    CHECK_MPI(MMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  }

  /* Dynamic window: the origin cannot know what is attached; the target
   * refuses, the origin hears it at unlock, memory stays as it was. */
  CASE("rma_errors dynamic range");
  MPI_Win dw;
  CHECK_MPI(MMPI_Win_create_dynamic(MPI_INFO_NULL, MMPI_COMM_WORLD, &dw));
  CHECK_MPI(MMPI_Win_set_errhandler(dw, MPI_ERRORS_RETURN));
  int region[4] = {7, 7, 7, 7}, guard[4] = {9, 9, 9, 9};
  (void)guard;
  CHECK_MPI(MMPI_Win_attach(dw, region, sizeof region));
  MPI_Aint mine, theirs;
  MMPI_Get_address(region, &mine);
  const int from = (rank - size / 2 + size) % size;
  CHECK_MPI(MMPI_Sendrecv(&mine, 1, MPI_AINT, from, 4, &theirs, 1, MPI_AINT, partner, 4,
                          MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, dw));
  CHECK_MPI(MMPI_Put(v, 4, MPI_INT, partner, theirs + 8, 4, MPI_INT, dw)); /* 2 ints over */
  EXPECT(err_class(MMPI_Win_unlock(partner, dw)) == MPI_ERR_RMA_RANGE, "unlock reports the range");
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) EXPECT(region[i] == 7, "region[%d] = %d changed", i, region[i]);

  /* Two regions with a gap between them: a put across the gap is refused
   * whole (adjacent regions join, others do not). */
  CASE("rma_errors dynamic gap");
  int gap[12];
  for (int i = 0; i < 12; ++i) gap[i] = 5;
  CHECK_MPI(MMPI_Win_attach(dw, gap, 4 * sizeof(int)));
  CHECK_MPI(MMPI_Win_attach(dw, gap + 8, 4 * sizeof(int)));
  MMPI_Get_address(gap, &mine);
  CHECK_MPI(MMPI_Sendrecv(&mine, 1, MPI_AINT, from, 4, &theirs, 1, MPI_AINT, partner, 4,
                          MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
  int twelve[12] = {0};
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, dw));
  CHECK_MPI(MMPI_Put(twelve, 12, MPI_INT, partner, theirs, 12, MPI_INT, dw));
  EXPECT(err_class(MMPI_Win_unlock(partner, dw)) == MPI_ERR_RMA_RANGE,
         "a put across unattached memory is refused");
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  for (int i = 0; i < 12; ++i) EXPECT(gap[i] == 5, "gap[%d] = %d changed", i, gap[i]);
  CHECK_MPI(MMPI_Win_detach(dw, gap));
  CHECK_MPI(MMPI_Win_detach(dw, gap + 8));

  /* Hostile frames on the window's private communicator: each refused and
   * counted; the target still serves an honest get afterwards. */
  CASE("rma_errors hostile");
  MPI_Comm wc;
  /* Weak in the unported build (mmpix_weak.h): null when run on Open MPI alone. */
  int (*volatile win_comm)(MPI_Win, MPI_Comm*) = MMPIX_Win_comm;
  if (win_comm != NULL) {
    CHECK_MPI(MMPIX_Win_comm(win, &wc));
    unsigned char junk[64];
    for (int i = 0; i < 64; ++i) junk[i] = (unsigned char)(i * 37 + rank);
    CHECK_MPI(MMPI_Send(junk, 3, MPI_BYTE, partner, 1, wc));  /* shorter than a header */
    CHECK_MPI(MMPI_Send(junk, 64, MPI_BYTE, partner, 1, wc)); /* bad magic */
    /* Well-formed headers (client/rma_wire.h) with a target datatype
     * description (client/rma_typemap.h) that is hostile in one way each. */
    int hostile = 2;
    struct node {
      uint8_t kind, pad[3];
      uint32_t child;
      int64_t a, b, c, d;
    };
    enum { LEAF = 1, VECTOR, STRUCT, ENTRY };
    struct node nodes[200];
    memset(nodes, 0, sizeof nodes);
    nodes[0].kind = LEAF;
    nodes[0].a = 16;
    /* Accumulates forged with a datatype/op pair MPI rejects (table indexes
     * of client/rma_types.cpp), each otherwise well formed: the target
     * refuses and counts them before any reduction, calls no error handler
     * (Open MPI's MPI_Reduce_local would call MPI_COMM_WORLD's, fatal) and
     * leaves the window as it was. */
    enum {
      OP_MAX = 0,
      OP_SUM = 2,
      OP_PROD = 3,
      OP_BAND = 5,
      OP_LOR = 6,
      OP_BOR = 7,
      OP_MAXLOC = 10,
      OP_NO_OP = 13
    };
    enum { E_INT = 6, E_FLOAT = 12, E_DOUBLE = 13, E_WCHAR = 15, E_BOOL = 16, E_ZDOUBLE = 29 };
    enum { E_2INT = 34, E_PACKED = 53 };
    hostile += send_frame(wc, partner, 3, OP_BAND, E_FLOAT, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_LOR, E_DOUBLE, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_MAXLOC, E_INT, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_SUM, E_2INT, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_MAX, E_ZDOUBLE, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_SUM, E_BOOL, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_PROD, E_WCHAR, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_SUM, E_PACKED, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 4, OP_BOR, E_FLOAT, nodes, 1, 0, 0, 16, 16);
    /* MPI_NO_OP in an accumulate (only Get_accumulate and Fetch_and_op take it) */
    hostile += send_frame(wc, partner, 3, OP_NO_OP, E_INT, nodes, 1, 0, 0, 16, 0);
    /* indexes past the tables */
    hostile += send_frame(wc, partner, 3, 200, E_FLOAT, nodes, 1, 0, 0, 16, 16);
    hostile += send_frame(wc, partner, 3, OP_SUM, 30000, nodes, 1, 0, 0, 16, 16);
    /* a block past the window's end; far before it; lengths that do not add
     * up (16 bytes of data for 8 of the type) */
    hostile += send_hostile(wc, partner, nodes, 1, W - 1, 0, 16, 16);
    hostile += send_hostile(wc, partner, nodes, 1, -((int64_t)1 << 40), 0, 16, 16);
    hostile += send_hostile(wc, partner, nodes, 1, 0, 0, 8, 16);
    /* a range past the type's 16 bytes */
    hostile += send_hostile(wc, partner, nodes, 1, 0, 8, 16, 16);
    /* a vector that is its own child (a cycle) */
    nodes[0].kind = VECTOR;
    nodes[0].a = nodes[0].b = 1;
    hostile += send_hostile(wc, partner, nodes, 1, 0, 0, 16, 16);
    /* 2^40 x 2^40 copies of a leaf: larger than any size can count */
    nodes[0].kind = LEAF;
    nodes[0].a = 1;
    nodes[1].kind = VECTOR;
    nodes[1].a = nodes[1].b = (int64_t)1 << 40;
    hostile += send_hostile(wc, partner, nodes, 2, 0, 0, 16, 16);
    /* 2^61 one-byte blocks 2^62 bytes apart, the last 16 asked for: offsets
     * far past 2^64 (no overflow, refused) */
    nodes[1].a = (int64_t)1 << 61;
    nodes[1].b = 1;
    nodes[1].c = (int64_t)1 << 62;
    hostile += send_hostile(wc, partner, nodes, 2, 0, ((uint64_t)1 << 61) - 16, 16, 16);
    /* a struct whose entry carries no data (the walk would scan it for nothing) */
    nodes[0].a = 0;
    nodes[1].kind = ENTRY;
    nodes[1].b = 1;
    nodes[1].child = 0;
    nodes[2].kind = STRUCT;
    nodes[2].child = 1;
    hostile += send_hostile(wc, partner, nodes, 3, 0, 0, 16, 16);
    /* 199 vectors nested in one another: deeper than the limit */
    nodes[0].a = 16;
    for (int k = 1; k < 200; ++k) {
      memset(&nodes[k], 0, sizeof nodes[k]);
      nodes[k].kind = VECTOR;
      nodes[k].child = (uint32_t)(k - 1);
      nodes[k].a = nodes[k].b = 1;
    }
    hostile += send_hostile(wc, partner, nodes, 200, 0, 0, 16, 16);
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, partner, 0, win));
    int got[4] = {0};
    int rc2 = MMPI_Get(got, 4, MPI_INT, partner, W - 4, 4, MPI_INT, win);
    rc2 = rc2 ? rc2 : MMPI_Win_unlock(partner, win);
    /* The refusals are reported to their (hostile) origin at its next
     * completion: this one. */
    EXPECT(err_class(rc2) == MPI_ERR_RMA_RANGE || rc2 == MPI_SUCCESS, "get after junk: %d", rc2);
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
    MPI_Count refused = 0;
    CHECK_MPI(MMPIX_Win_refused(win, &refused));
    EXPECT(refused == hostile, "refused %lld hostile frames, expected %d", (long long)refused,
           hostile);
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < W; ++i) EXPECT(mem[i] == init_val(rank, i), "window[%d] changed", i);
    CHECK_MPI(MMPI_Win_unlock(rank, win));
    /* and an honest get still works */
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, partner, 0, win));
    CHECK_MPI(MMPI_Get(got, 4, MPI_INT, partner, W - 4, 4, MPI_INT, win));
    CHECK_MPI(MMPI_Win_unlock(partner, win));
    for (int i = 0; i < 4; ++i)
      EXPECT(got[i] == init_val(partner, W - 4 + i), "get after junk: %d", got[i]);
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_Win_detach(dw, region));
  CHECK_MPI(MMPI_Win_free(&dw));
  CHECK_MPI(MMPI_Win_free(&win));
}

/* ------------------------------------------------------------ rma_bounds */

/* This process's peak resident memory (VmHWM in /proc/self/status), bytes;
 * -1 where there is no /proc. */
static long long peak_rss(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long long kb = -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmHWM: %lld kB", &kb) == 1) break;
  fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

static void suite_bounds(void) {
  /* Target: the last rank (the other cluster), default bound
   * (MMPI_RMA_REPLY_BYTES, 4 MiB). Rank 0: one Get of 64 MiB whose target
   * datatype is a stride-0 vector of one-byte blocks (every block the same
   * byte: 64 Mi blocks to walk, a reply 16 000 times the window), then a
   * forged Get of a stride-0 vector of 1 GiB. At 2+2 rank 1 keeps getting
   * from the same target meanwhile. */
  enum { WB = 4096 };
  const long long big = 64LL << 20, bound = 4LL << 20;
  const int target = size - 1;
  unsigned char* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MMPI_Win_allocate(WB, 1, MPI_INFO_NULL, MMPI_COMM_WORLD, &mem, &win));
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  for (int i = 0; i < WB; ++i) mem[i] = (unsigned char)(i * 7 + rank);
  CHECK_MPI(MMPI_Win_unlock(rank, win));
  MPI_Datatype same;
  CHECK_MPI(MMPI_Type_vector((int)big, 1, 0, MPI_BYTE, &same));
  CHECK_MPI(MMPI_Type_commit(&same));
  unsigned char got[8];
  if (rank != target) { /* connections up before anything is timed */
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MMPI_Get(got, 8, MPI_BYTE, target, 16, 8, MPI_BYTE, win));
    CHECK_MPI(MMPI_Win_unlock(target, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  const long long before = peak_rss();
  CASE("rma_bounds get");
  if (rank == 0) {
    unsigned char* buf = malloc((size_t)big);
    EXPECT(buf != NULL, "no memory for %lld bytes", big);
    memset(buf, 0, (size_t)big);
    const double t0 = now();
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MMPI_Get(buf, (int)big, MPI_BYTE, target, 5, 1, same, win));
    CHECK_MPI(MMPI_Win_unlock(target, win));
    double took = now() - t0;
    const unsigned char want = (unsigned char)(5 * 7 + target);
    long long bad = 0;
    for (long long i = 0; i < big; ++i) bad += buf[i] != want;
    EXPECT(bad == 0, "%lld of %lld fetched bytes wrong", bad, big);
    free(buf);
    if (size > 2) CHECK_MPI(MMPI_Send(&took, 1, MPI_DOUBLE, 1, 9, MMPI_COMM_WORLD));
  } else if (rank == 1 && size > 2) {
    /* Another origin of the same target is served between the pieces: its
     * slowest get takes a small part of the large one (a target that
     * served the 64 MiB at once would hold it for about all of it). */
    double took = 0, slowest = 0;
    int flag = 0, n = 0;
    MPI_Request rq;
    CHECK_MPI(MMPI_Irecv(&took, 1, MPI_DOUBLE, 0, 9, MMPI_COMM_WORLD, &rq));
    while (!flag) {
      const double t0 = now();
      CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
      CHECK_MPI(MMPI_Get(got, 8, MPI_BYTE, target, 16, 8, MPI_BYTE, win));
      CHECK_MPI(MMPI_Win_unlock(target, win));
      if (now() - t0 > slowest) slowest = now() - t0;
      for (int i = 0; i < 8; ++i)
        EXPECT(got[i] == (unsigned char)((16 + i) * 7 + target), "small get [%d] = %d", i, got[i]);
      ++n;
      CHECK_MPI(MMPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    }
    printf("rma_bounds: 64 MiB get %.3f s; meanwhile %d small gets, slowest %.3f s\n", took, n,
           slowest);
    EXPECT(n >= 2 && slowest < took / 2, "%d small gets, slowest %.3f s of the large one's %.3f s",
           n, slowest, took);
  }

  /* A forged Get (rma_wire.h) of a stride-0 vector of 1 GiB: refused before
   * anything is walked or allocated, and answered (MPI_ERR_COUNT). */
  CASE("rma_bounds forged");
  int (*volatile win_comm)(MPI_Win, MPI_Comm*) = MMPIX_Win_comm;
  const int forge = win_comm != NULL;
  if (forge && rank == 0) {
    MPI_Comm wc;
    CHECK_MPI(MMPIX_Win_comm(win, &wc));
    struct node {
      uint8_t kind, pad[3];
      uint32_t child;
      int64_t a, b, c, d;
    } nodes[2];
    memset(nodes, 0, sizeof nodes);
    nodes[0].kind = 1; /* leaf of 1 byte */
    nodes[0].a = 1;
    nodes[1].kind = 2; /* vector: 2^30 blocks of 1, stride 0 */
    nodes[1].a = (int64_t)1 << 30;
    nodes[1].b = 1;
    frame_reply_tag = 16 + 4242;
    send_frame(wc, target, 2, 0, 0, nodes, 2, 0, 0, (uint64_t)1 << 30, 0);
    frame_reply_tag = 0;
    struct {
      uint32_t magic;
      int32_t error;
      uint64_t data_len;
      int32_t prior;
      uint32_t pad;
    } rh;
    memset(&rh, 0, sizeof rh);
    CHECK_MPI(MMPI_Recv(&rh, (int)sizeof rh, MPI_BYTE, target, 16 + 4242, wc, MPI_STATUS_IGNORE));
    EXPECT(rh.magic == 0x5A524D41 && err_class(rh.error) == MPI_ERR_COUNT && rh.data_len == 0,
           "forged 1 GiB get answered with error %d, %llu bytes", rh.error,
           (unsigned long long)rh.data_len);
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == target) {
    MPI_Count refused = 0;
    if (forge) {
      CHECK_MPI(MMPIX_Win_refused(win, &refused));
      EXPECT(refused == 1, "refused %lld requests, expected the forged one", (long long)refused);
    }
    const long long grew = peak_rss() - before;
    printf("rma_bounds: target peak memory grew by %lld KiB (bound %lld KiB)\n", grew / 1024,
           bound / 1024);
    EXPECT(before < 0 || grew < 2 * bound + (8LL << 20),
           "target peak memory grew by %lld bytes serving 64 MiB and 1 GiB gets", grew);
  }
  MMPI_Type_free(&same);
  CHECK_MPI(MMPI_Win_free(&win));
}

/* ---------------------------------------------------------- rma_progress */

static volatile double sink;

static void suite_progress(void) {
  /* Target: rank 0, computing 2 s with no MPI call. Origin: the last rank
   * (the other cluster). */
  double* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MMPI_Win_allocate(64, sizeof(double), MPI_INFO_NULL, MMPI_COMM_WORLD, &mem, &win));
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  mem[0] = 42.5 + rank;
  CHECK_MPI(MMPI_Win_unlock(rank, win));
  const int origin = size - 1;
  CASE("rma_progress");
  /* one get from an idle target first (connections up, for comparison) */
  double idle = -1, busy = -1, got = 0;
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == origin) {
    const double t0 = now();
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MMPI_Get(&got, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, win));
    CHECK_MPI(MMPI_Win_unlock(0, win));
    idle = now() - t0;
  } else if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)); /* serve inside MPI meanwhile */
    CHECK_MPI(MMPI_Win_unlock(0, win));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == 0) {
    const double t0 = now();
    double x = 1.0;
    while (now() - t0 < 2.0)
      for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
  } else if (rank == origin) {
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL); /* the target is computing now */
    const double t0 = now();
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MMPI_Get(&got, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, win));
    CHECK_MPI(MMPI_Win_unlock(0, win));
    busy = now() - t0;
    EXPECT(got == 42.5, "got %g", got);
    printf("rma_progress: get from an idle target %.3f ms, from a computing target %.3f ms\n",
           idle * 1e3, busy * 1e3);
    /* "Well under 2 s": the loop has 1.8 s left when the get starts; a
     * target that served only at its next MPI call would answer after it. */
    EXPECT(busy < 0.9, "a get from a computing target took %.3f s", busy);
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_Win_free(&win));
}

/* ------------------------------------------------------------ rma_stream */

static void suite_stream(double secs) {
  /* Every rank adds 1..n to rank 0's first counter and 1 to its second
   * (fetch-and-op), one flush each, for `secs` seconds and at least 2000
   * operations: a resent accumulate applied twice, or one lost, shows in
   * the sums. tests/integration/failover_itest.sh kills a zipperd meanwhile. */
  long long* mem = NULL;
  MPI_Win win;
  CHECK_MPI(MMPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                              MMPI_COMM_WORLD, &mem, &win));
  CASE("rma_stream");
  CHECK_MPI(MMPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  for (int i = 0; i < 4; ++i) mem[i] = 0;
  CHECK_MPI(MMPI_Win_unlock(rank, win));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == 0) {
    printf("# failover: rma_stream begin\n");
    fflush(stdout);
  }
  const double t0 = now();
  long long n = 0, fetched_max = -1;
  CHECK_MPI(MMPI_Win_lock_all(0, win));
  while (n < 2000 || now() - t0 < secs) {
    ++n;
    long long one = 1, old = 0;
    CHECK_MPI(MMPI_Accumulate(&n, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_MPI(MMPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 1, MPI_SUM, win));
    CHECK_MPI(MMPI_Win_flush(0, win));
    if (old > fetched_max) fetched_max = old;
  }
  CHECK_MPI(MMPI_Win_unlock_all(win));
  long long total = 0, ops = 0;
  const long long mine = n * (n + 1) / 2;
  CHECK_MPI(MMPI_Reduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_Reduce(&n, &ops, 1, MPI_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD));
  if (rank == 0) {
    CHECK_MPI(MMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT(mem[0] == total, "sum %lld, expected %lld (applied twice or lost)", mem[0], total);
    EXPECT(mem[1] == ops, "counter %lld, expected %lld", mem[1], ops);
    CHECK_MPI(MMPI_Win_unlock(0, win));
    printf("rma_stream: %lld accumulates and %lld fetch-and-ops in %.1f s\n", ops, ops, now() - t0);
  }
  CHECK_MPI(MMPI_Win_free(&win));
}

/* ------------------------------------------------------------------ main */

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(
        stderr,
        "usage: %s rma_ops|rma_allops|rma_windows|rma_errors|rma_bounds|rma_progress|rma_stream\n",
        argv[0]);
    return 2;
  }
  (void)nlow;
  CHECK_MPI(MMPI_Init(&argc, &argv));
  CHECK_MPI(MMPI_Comm_rank(MMPI_COMM_WORLD, &rank));
  CHECK_MPI(MMPI_Comm_size(MMPI_COMM_WORLD, &size));
  CHECK_MPI(MMPI_Comm_group(MMPI_COMM_WORLD, &world_group));
  const char* suite = argv[1];
  const double t0 = now();
  if (strcmp(suite, "rma_ops") == 0)
    suite_ops();
  else if (strcmp(suite, "rma_allops") == 0)
    suite_allops();
  else if (strcmp(suite, "rma_windows") == 0)
    suite_windows();
  else if (strcmp(suite, "rma_errors") == 0)
    suite_errors();
  else if (strcmp(suite, "rma_progress") == 0)
    suite_progress();
  else if (strcmp(suite, "rma_bounds") == 0)
    suite_bounds();
  else if (strcmp(suite, "rma_stream") == 0)
    suite_stream(argc > 2 ? atof(argv[2]) : 0);
  else
    FAIL("unknown suite %s", suite);
  long long all = 0;
  CHECK_MPI(MMPI_Reduce(&checks, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD));
  MMPI_Group_free(&world_group);
  if (rank == 0) printf("PASS %s (%d ranks, %lld checks, %.1f s)\n", suite, size, all, now() - t0);
  CHECK_MPI(MMPI_Finalize());
  return 0;
}
