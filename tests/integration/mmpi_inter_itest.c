/* Integration test of inter-communicators, run across two
 * clusters by zipper-run. Usage: mmpi_inter_itest SUITE[@GROUPS]
 *   inter_coupled: a coupled pair, one group per cluster (GROUPS=cluster)
 *                  or groups that each span both clusters (GROUPS=interleaved:
 *                  even and odd world ranks), joined by Intercomm_create:
 *                  fields exchanged point to point (values and statuses
 *                  checked) and an inter-communicator Allreduce checked
 *                  against the reference every rank computes from the
 *                  deterministic inputs; Intercomm_merge both ways, Comm_dup,
 *                  Comm_split, Comm_create and Comm_free of it
 *   inter_coll:    every collective on the inter-communicator, blocking and
 *                  non-blocking, every root (MPI_ROOT / MPI_PROC_NULL / the
 *                  remote rank), every received byte checked and the bytes
 *                  around them left untouched
 * Prints "PASS <suite> ..." on rank 0 when every rank passed. */
#include <mmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest_check.h"

/* The group of a world rank: 0 or 1, and its rank in that group. */
static int interleaved;
static int group_of(int w) { return interleaved ? w % 2 : w >= nlow; }
static int group_rank(int w) {
  int r = 0;
  for (int v = 0; v < w; ++v) r += group_of(v) == group_of(w);
  return r;
}
static int group_size(int g) {
  int n = 0;
  for (int v = 0; v < size; ++v) n += group_of(v) == g;
  return n;
}
static int world_of(int g, int r) {
  for (int v = 0; v < size; ++v)
    if (group_of(v) == g && r-- == 0) return v;
  return -1;
}

/* Rank r's field value at index i in group g (the inputs of every check). */
static double field(int g, int r, int i) { return (g + 1) * 1000.0 + r * 10.0 + i * 0.125; }
static int ival(int g, int r, int blk, int e) { return ((g * 64 + r) * 64 + blk) * 4096 + e; }

static MPI_Comm make_inter(MPI_Comm* local) {
  int g = group_of(rank);
  CHECK_MPI(MMPI_Comm_split(MMPI_COMM_WORLD, g, rank, local));
  MPI_Comm ic;
  CHECK_MPI(MMPI_Intercomm_create(*local, 0, MMPI_COMM_WORLD, world_of(1 - g, 0), 29, &ic));
  return ic;
}

static void suite_coupled(void) {
  int g = group_of(rank), me = group_rank(rank), lsize = group_size(g), rsize = group_size(1 - g);
  MPI_Comm local, ic;
  CASE("Intercomm_create");
  ic = make_inter(&local);
  int flag, n, r;
  CHECK_MPI(MMPI_Comm_test_inter(ic, &flag));
  EXPECT(flag, "Comm_test_inter gave 0");
  CHECK_MPI(MMPI_Comm_test_inter(local, &flag));
  EXPECT(!flag, "Comm_test_inter on an intra-communicator gave 1");
  CHECK_MPI(MMPI_Comm_size(ic, &n));
  EXPECT(n == lsize, "Comm_size %d, local group has %d", n, lsize);
  CHECK_MPI(MMPI_Comm_rank(ic, &r));
  EXPECT(r == me, "Comm_rank %d, expected %d", r, me);
  CHECK_MPI(MMPI_Comm_remote_size(ic, &n));
  EXPECT(n == rsize, "Comm_remote_size %d, expected %d", n, rsize);
  MPI_Group rg, wg;
  CHECK_MPI(MMPI_Comm_remote_group(ic, &rg));
  CHECK_MPI(MMPI_Comm_group(MMPI_COMM_WORLD, &wg));
  for (int j = 0; j < rsize; ++j) {
    int w;
    CHECK_MPI(MMPI_Group_translate_ranks(rg, 1, &j, wg, &w));
    EXPECT(w == world_of(1 - g, j), "remote rank %d is world %d", j, w);
  }
  MMPI_Group_free(&rg);
  MMPI_Group_free(&wg);

  /* Fields: each rank sends to remote rank (me % rsize) and receives from
   * every remote rank j with j % lsize == me; statuses name remote ranks. */
  enum { N = 20000 }; /* 160 KB: the rendezvous path */
  double* out = malloc(sizeof(double) * N);
  double* in = malloc(sizeof(double) * N);
  for (int i = 0; i < N; ++i) out[i] = field(g, me, i);
  for (int round = 0; round < 2; ++round) {
    CASE("fields round %d", round);
    MPI_Request req;
    CHECK_MPI(MMPI_Isend(out, N, MPI_DOUBLE, me % rsize, 7 + round, ic, &req));
    for (int j = 0; j < rsize; ++j) {
      if (j % lsize != me) continue;
      MPI_Status st;
      CHECK_MPI(MMPI_Recv(in, N, MPI_DOUBLE, round ? MPI_ANY_SOURCE : j, 7 + round, ic, &st));
      int src = st.MPI_SOURCE;
      EXPECT(round || src == j, "status source %d, expected %d", src, j);
      EXPECT(src >= 0 && src < rsize && src % lsize == me, "status source %d", src);
      for (int i = 0; i < N; ++i)
        EXPECT(in[i] == field(1 - g, src, i), "field from %d [%d] = %g", src, i, in[i]);
    }
    CHECK_MPI(MMPI_Wait(&req, MPI_STATUS_IGNORE));
  }
  /* Allreduce across the groups: each group gets the remote group's sum. */
  CASE("Allreduce");
  CHECK_MPI(MMPI_Allreduce(out, in, N, MPI_DOUBLE, MPI_SUM, ic));
  for (int i = 0; i < N; ++i) {
    double want = 0;
    for (int j = 0; j < rsize; ++j) want += field(1 - g, j, i);
    EXPECT(in[i] == want, "Allreduce [%d] = %g, expected %g", i, in[i], want);
  }
  /* Merge: high = group id puts group 0 first; reversed puts group 1 first. */
  for (int rev = 0; rev <= 1; ++rev) {
    CASE("Intercomm_merge high=%d", g ^ rev);
    MPI_Comm m;
    CHECK_MPI(MMPI_Intercomm_merge(ic, g ^ rev, &m));
    int mr, ms;
    MMPI_Comm_rank(m, &mr);
    MMPI_Comm_size(m, &ms);
    int first = rev ? 1 : 0;
    int want = g == first ? me : group_size(first) + me;
    EXPECT(ms == size && mr == want, "merged rank %d of %d, expected %d", mr, ms, want);
    int sum = 0, one = mr;
    CHECK_MPI(MMPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, m));
    EXPECT(sum == size * (size - 1) / 2, "merged Allreduce %d", sum);
    CHECK_MPI(MMPI_Comm_free(&m));
  }
  CASE("Comm_dup / Comm_split / Comm_create of the inter-communicator");
  MPI_Comm d;
  CHECK_MPI(MMPI_Comm_dup(ic, &d));
  CHECK_MPI(MMPI_Comm_test_inter(d, &flag));
  EXPECT(flag, "dup is not an inter-communicator");
  int x = me + 1, y = 0;
  CHECK_MPI(MMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
  EXPECT(y == rsize * (rsize + 1) / 2, "Allreduce on the dup %d", y);
  CHECK_MPI(MMPI_Comm_free(&d));
  /* Split: colour = rank parity, key reverses the order. */
  MPI_Comm sp;
  CHECK_MPI(MMPI_Comm_split(ic, me % 2, -me, &sp));
  int lpar = (lsize + 1 - me % 2) / 2, rpar = (rsize + 1 - me % 2) / 2;
  if (rpar == 0) {
    EXPECT(sp == MPI_COMM_NULL, "split with no remote members is not MPI_COMM_NULL");
  } else {
    int ss, rs, sr;
    MMPI_Comm_size(sp, &ss);
    MMPI_Comm_remote_size(sp, &rs);
    MMPI_Comm_rank(sp, &sr);
    EXPECT(ss == lpar && rs == rpar, "split sizes %d/%d, expected %d/%d", ss, rs, lpar, rpar);
    EXPECT(sr == lpar - 1 - me / 2, "split rank %d", sr);
    /* The two leaders of the colour swap their world ranks: same parity. */
    if (sr == 0) {
      int v = rank, got = -1;
      CHECK_MPI(MMPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, sp, MPI_STATUS_IGNORE));
      EXPECT(group_of(got) != g && group_rank(got) % 2 == me % 2, "split leader peer %d", got);
    }
    CHECK_MPI(MMPI_Comm_free(&sp));
  }
  MPI_Group lg, sub;
  CHECK_MPI(MMPI_Comm_group(ic, &lg));
  int zero = 0;
  CHECK_MPI(MMPI_Group_incl(lg, 1, &zero, &sub));
  MPI_Comm cr;
  CHECK_MPI(MMPI_Comm_create(ic, sub, &cr));
  EXPECT((me == 0) == (cr != MPI_COMM_NULL), "Comm_create membership");
  if (cr != MPI_COMM_NULL) {
    CHECK_MPI(MMPI_Comm_remote_size(cr, &n));
    EXPECT(n == 1, "Comm_create remote size %d", n);
    CHECK_MPI(MMPI_Comm_free(&cr));
  }
  MMPI_Group_free(&sub);
  MMPI_Group_free(&lg);
  CHECK_MPI(MMPI_Comm_free(&ic));
  EXPECT(ic == MPI_COMM_NULL, "Comm_free left the handle");
  CHECK_MPI(MMPI_Comm_free(&local));
  free(out);
  free(in);
}

/* ---------------------------------------------------------- inter_coll -- */

#define SENT (-7)
static void fill(int* b, int n) {
  for (int i = 0; i < n; ++i) b[i] = SENT;
}

static void suite_coll(void) {
  int g = group_of(rank), me = group_rank(rank), lsize = group_size(g), rsize = group_size(1 - g);
  MPI_Comm local, ic = make_inter(&local);
  static const int counts[] = {1, 3000};                  /* 12 KB and past the eager limit */
  int maxn = 3000 + 2, big = maxn * lsize * rsize + maxn; /* reduce_scatter: c * lsize * rsize */
  int* sb = malloc(sizeof(int) * big);
  int* rb = malloc(sizeof(int) * big);
  int sc[64], sd[64], rc[64], rd[64];
  for (int nb = 0; nb <= 1; ++nb)
    for (int ci = 0; ci < 2; ++ci) {
      int c = counts[ci];
      MPI_Request req;
#define RUN(blocking, nonblocking)                   \
  do {                                               \
    if (nb) {                                        \
      CHECK_MPI(nonblocking);                        \
      CHECK_MPI(MMPI_Wait(&req, MPI_STATUS_IGNORE)); \
    } else {                                         \
      CHECK_MPI(blocking);                           \
    }                                                \
  } while (0)
      CASE("%sbarrier", nb ? "i" : "");
      RUN(MMPI_Barrier(ic), MMPI_Ibarrier(ic, &req));
      /* Rooted: each group roots once at each of its ranks 0 and last. */
      for (int rg = 0; rg <= 1; ++rg)
        for (int which = 0; which <= 1; ++which) {
          int rootrank = which ? group_size(rg) - 1 : 0;
          int root = g == rg ? (me == rootrank ? MPI_ROOT : MPI_PROC_NULL) : rootrank;
          int leaf = g != rg;
          CASE("%sbcast count %d root group %d rank %d", nb ? "i" : "", c, rg, rootrank);
          for (int i = 0; i < c; ++i) sb[i] = root == MPI_ROOT ? ival(rg, rootrank, 0, i) : SENT;
          fill(sb + c, 1);
          RUN(MMPI_Bcast(sb, c, MPI_INT, root, ic), MMPI_Ibcast(sb, c, MPI_INT, root, ic, &req));
          for (int i = 0; i < c; ++i)
            EXPECT(sb[i] == (root == MPI_PROC_NULL ? SENT : ival(rg, rootrank, 0, i)),
                   "bcast [%d]=%d", i, sb[i]);
          EXPECT(sb[c] == SENT, "bcast wrote past the buffer");

          CASE("%sreduce count %d root group %d rank %d", nb ? "i" : "", c, rg, rootrank);
          for (int i = 0; i < c; ++i) sb[i] = ival(g, me, 1, i);
          fill(rb, c + 1);
          RUN(MMPI_Reduce(sb, rb, c, MPI_INT, MPI_SUM, root, ic),
              MMPI_Ireduce(sb, rb, c, MPI_INT, MPI_SUM, root, ic, &req));
          for (int i = 0; i < c; ++i) {
            int want = SENT;
            if (root == MPI_ROOT) {
              want = 0;
              for (int j = 0; j < rsize; ++j) want += ival(1 - g, j, 1, i);
            }
            EXPECT(rb[i] == want, "reduce [%d]=%d want %d", i, rb[i], want);
          }
          EXPECT(rb[c] == SENT, "reduce wrote past the buffer");

          CASE("%sgatherv count %d root group %d rank %d", nb ? "i" : "", c, rg, rootrank);
          for (int i = 0; i < c + 1; ++i) sb[i] = ival(g, me, 2, i);
          int rs = group_size(1 - rg); /* the leaves' group size */
          for (int j = 0; j < rs; ++j) rc[j] = c + (j % 2), rd[j] = j * maxn + 1;
          fill(rb, rs * maxn + 1);
          int mycount = c + (me % 2);
          RUN(MMPI_Gatherv(sb, mycount, MPI_INT, rb, rc, rd, MPI_INT, root, ic),
              MMPI_Igatherv(sb, mycount, MPI_INT, rb, rc, rd, MPI_INT, root, ic, &req));
          if (root == MPI_ROOT)
            for (int j = 0; j < rs; ++j)
              for (int e = -1; e <= rc[j]; ++e) {
                int want = e < 0 || e == rc[j] ? SENT : ival(1 - g, j, 2, e);
                EXPECT(rb[rd[j] + e] == want, "gatherv from %d [%d]=%d", j, e, rb[rd[j] + e]);
              }
          if (leaf) EXPECT(1, "leaf");
          CASE("%sgather count %d root group %d rank %d", nb ? "i" : "", c, rg, rootrank);
          fill(rb, rs * c + 1);
          RUN(MMPI_Gather(sb, c, MPI_INT, rb, c, MPI_INT, root, ic),
              MMPI_Igather(sb, c, MPI_INT, rb, c, MPI_INT, root, ic, &req));
          if (root == MPI_ROOT)
            for (int j = 0; j < rs; ++j)
              for (int e = 0; e < c; ++e)
                EXPECT(rb[j * c + e] == ival(1 - g, j, 2, e), "gather from %d [%d]", j, e);

          CASE("%sscatterv count %d root group %d rank %d", nb ? "i" : "", c, rg, rootrank);
          for (int j = 0; j < rs; ++j) {
            sc[j] = c + (j % 2), sd[j] = j * maxn;
            for (int e = 0; e < sc[j]; ++e) sb[sd[j] + e] = ival(g, me, 3 + j, e);
          }
          fill(rb, c + 2);
          RUN(MMPI_Scatterv(sb, sc, sd, MPI_INT, rb, mycount, MPI_INT, root, ic),
              MMPI_Iscatterv(sb, sc, sd, MPI_INT, rb, mycount, MPI_INT, root, ic, &req));
          if (leaf) {
            for (int e = 0; e < mycount; ++e)
              EXPECT(rb[e] == ival(rg, rootrank, 3 + me, e), "scatterv [%d]=%d", e, rb[e]);
            EXPECT(rb[mycount] == SENT, "scatterv wrote past its block");
          }
          CASE("%sscatter count %d root group %d rank %d", nb ? "i" : "", c, rg, rootrank);
          for (int j = 0; j < rs; ++j)
            for (int e = 0; e < c; ++e) sb[j * c + e] = ival(g, me, 3 + j, e);
          fill(rb, c + 1);
          RUN(MMPI_Scatter(sb, c, MPI_INT, rb, c, MPI_INT, root, ic),
              MMPI_Iscatter(sb, c, MPI_INT, rb, c, MPI_INT, root, ic, &req));
          if (leaf)
            for (int e = 0; e < c; ++e)
              EXPECT(rb[e] == ival(rg, rootrank, 3 + me, e), "scatter [%d]", e);
        }
      /* All-to-all family: data from the remote group. */
      CASE("%sallreduce count %d", nb ? "i" : "", c);
      for (int i = 0; i < c; ++i) sb[i] = ival(g, me, 4, i);
      fill(rb, c + 1);
      RUN(MMPI_Allreduce(sb, rb, c, MPI_INT, MPI_SUM, ic),
          MMPI_Iallreduce(sb, rb, c, MPI_INT, MPI_SUM, ic, &req));
      for (int i = 0; i < c; ++i) {
        int want = 0;
        for (int j = 0; j < rsize; ++j) want += ival(1 - g, j, 4, i);
        EXPECT(rb[i] == want, "allreduce [%d]", i);
      }
      EXPECT(rb[c] == SENT, "allreduce wrote past the buffer");
      CASE("%sallgather(v) count %d", nb ? "i" : "", c);
      fill(rb, rsize * maxn);
      for (int j = 0; j < rsize; ++j) rc[j] = c, rd[j] = j * maxn + 1;
      RUN(MMPI_Allgatherv(sb, c, MPI_INT, rb, rc, rd, MPI_INT, ic),
          MMPI_Iallgatherv(sb, c, MPI_INT, rb, rc, rd, MPI_INT, ic, &req));
      for (int j = 0; j < rsize; ++j)
        for (int e = -1; e <= c; ++e)
          EXPECT(rb[rd[j] + e] == (e < 0 || e == c ? SENT : ival(1 - g, j, 4, e)),
                 "allgatherv %d [%d]", j, e);
      fill(rb, rsize * c);
      RUN(MMPI_Allgather(sb, c, MPI_INT, rb, c, MPI_INT, ic),
          MMPI_Iallgather(sb, c, MPI_INT, rb, c, MPI_INT, ic, &req));
      for (int j = 0; j < rsize; ++j)
        for (int e = 0; e < c; ++e)
          EXPECT(rb[j * c + e] == ival(1 - g, j, 4, e), "allgather %d [%d]", j, e);
      CASE("%salltoall(v,w) count %d", nb ? "i" : "", c);
      for (int j = 0; j < rsize; ++j)
        for (int e = 0; e < c; ++e) sb[j * c + e] = ival(g, me, 8 + j, e);
      fill(rb, rsize * c);
      RUN(MMPI_Alltoall(sb, c, MPI_INT, rb, c, MPI_INT, ic),
          MMPI_Ialltoall(sb, c, MPI_INT, rb, c, MPI_INT, ic, &req));
      for (int j = 0; j < rsize; ++j)
        for (int e = 0; e < c; ++e)
          EXPECT(rb[j * c + e] == ival(1 - g, j, 8 + me, e), "alltoall %d [%d]", j, e);
      int swb[64], rwb[64];
      MPI_Datatype ts[64];
      for (int j = 0; j < rsize; ++j) {
        sc[j] = c, sd[j] = j * c, rc[j] = c, rd[j] = j * maxn + 1;
        swb[j] = sd[j] * (int)sizeof(int), rwb[j] = rd[j] * (int)sizeof(int), ts[j] = MPI_INT;
      }
      fill(rb, rsize * maxn);
      RUN(MMPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic),
          MMPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, &req));
      for (int j = 0; j < rsize; ++j)
        for (int e = -1; e <= c; ++e)
          EXPECT(rb[rd[j] + e] == (e < 0 || e == c ? SENT : ival(1 - g, j, 8 + me, e)),
                 "alltoallv %d [%d]", j, e);
      fill(rb, rsize * maxn);
      RUN(MMPI_Alltoallw(sb, sc, swb, ts, rb, rc, rwb, ts, ic),
          MMPI_Ialltoallw(sb, sc, swb, ts, rb, rc, rwb, ts, ic, &req));
      for (int j = 0; j < rsize; ++j)
        for (int e = 0; e < c; ++e)
          EXPECT(rb[rd[j] + e] == ival(1 - g, j, 8 + me, e), "alltoallw %d [%d]", j, e);
      /* Reduce_scatter(_block): equal totals in both groups (c * lsize * rsize). */
      CASE("%sreduce_scatter count %d", nb ? "i" : "", c);
      int per = c * rsize, total = per * lsize; /* my block: per; remote's: c * lsize */
      for (int i = 0; i < total; ++i) sb[i] = ival(g, me, 5, i);
      fill(rb, per + 1);
      RUN(MMPI_Reduce_scatter_block(sb, rb, per, MPI_INT, MPI_SUM, ic),
          MMPI_Ireduce_scatter_block(sb, rb, per, MPI_INT, MPI_SUM, ic, &req));
      for (int e = 0; e < per; ++e) {
        int want = 0;
        for (int j = 0; j < rsize; ++j) want += ival(1 - g, j, 5, me * per + e);
        EXPECT(rb[e] == want, "reduce_scatter_block [%d]=%d want %d", e, rb[e], want);
      }
      EXPECT(rb[per] == SENT, "reduce_scatter_block wrote past its block");
      for (int i = 0; i < lsize; ++i) rc[i] = per;
      fill(rb, per + 1);
      RUN(MMPI_Reduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, ic),
          MMPI_Ireduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, ic, &req));
      for (int e = 0; e < per; ++e) {
        int want = 0;
        for (int j = 0; j < rsize; ++j) want += ival(1 - g, j, 5, me * per + e);
        EXPECT(rb[e] == want, "reduce_scatter [%d]", e);
      }
    }
  CHECK_MPI(MMPI_Comm_free(&ic));
  CHECK_MPI(MMPI_Comm_free(&local));
  free(sb);
  free(rb);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s inter_coupled|inter_coll[@cluster|@interleaved]\n", argv[0]);
    return 2;
  }
  MMPI_Init(&argc, &argv);
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* x = getenv("MMPI_NP_LOW");
  nlow = x ? atoi(x) : 1;
  char suite[64];
  snprintf(suite, sizeof suite, "%s", argv[1]);
  char* at = strchr(suite, '@');
  if (at) {
    *at = 0;
    interleaved = !strcmp(at + 1, "interleaved");
  }
  if (size < 2 || size > 32 || group_size(0) == 0 || group_size(1) == 0) {
    if (rank == 0) fprintf(stderr, "mmpi_inter_itest: needs 2..32 ranks in two groups\n");
    MMPI_Abort(MMPI_COMM_WORLD, 2);
  }
  if (!strcmp(suite, "inter_coupled"))
    suite_coupled();
  else if (!strcmp(suite, "inter_coll"))
    suite_coll();
  else
    FAIL("unknown suite %s", suite);
  long long total = 0;
  MMPI_Reduce(&checks, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD);
  if (rank == 0)
    printf("PASS %s %lld checks on %d ranks (%d+%d)\n", argv[1], total, size, nlow, size - nlow);
  MMPI_Finalize();
  return 0;
}
