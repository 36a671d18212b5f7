/* Integration test of process topologies and neighbourhood collectives,
 * run across two clusters by zipper-run. Usage: mmpi_topo_itest SUITE
 *   topo_graph:    Graph_create, Dist_graph_create(_adjacent), their queries,
 *                  Topo_test, Cart_map/Graph_map, reorder 0 and 1; with
 *                  reorder, the new order's cut (edges whose ends lie in
 *                  different clusters) is checked against a brute-force
 *                  minimum over every placement, and never above the identity's;
 *                  dist-graph vertices stay put under reorder
 *   topo_graph_distreorder: the same, run with MMPI_DIST_GRAPH_REORDER=1:
 *                  reorder must bring the dist-graph's weighted cut to the
 *                  brute-force minimum, below the identity's
 *   topo_neighbor: the ten neighbourhood collectives on a 2-D periodic
 *                  Cartesian communicator and on a dist-graph whose edges
 *                  cross the bridge, counts below and above the rendezvous
 *                  threshold; every received byte and every gap checked
 * Prints "PASS <suite> ..." on rank 0 when every rank passed; a mismatch
 * prints FAIL with the case and aborts the job.
 *
 * Expected data is computed from every rank's neighbour lists (gathered), by
 * MPI's matching rule: the k-th receive of rank r from s gets the k-th
 * message s sent to r, each message one block (MPI-3.1 §7.6). */
#include <mmpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "itest_check.h"

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) FAIL("out of memory for %zu bytes", n);
  return p;
}

/* ------------------------------------------------------------ clusters -- */

/* The cluster (0 low, 1 high) of each rank of `comm`, by its world rank. */
static void clusters_of(MPI_Comm comm, int n, int* cl) {
  MPI_Group g, wg;
  int* r = xmalloc(sizeof(int) * n);
  int* w = xmalloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) r[i] = i;
  CHECK_MPI(MMPI_Comm_group(comm, &g));
  CHECK_MPI(MMPI_Comm_group(MMPI_COMM_WORLD, &wg));
  CHECK_MPI(MMPI_Group_translate_ranks(g, n, r, wg, w));
  for (int i = 0; i < n; ++i) cl[i] = w[i] < nlow ? 0 : 1;
  MMPI_Group_free(&g);
  MMPI_Group_free(&wg);
  free(r);
  free(w);
}

/* Edges as (u, v) pairs; cut = edges with ends in different clusters. */
static long cut_of(int ne, const int* eu, const int* ev, const int* part) {
  long c = 0;
  for (int k = 0; k < ne; ++k) c += part[eu[k]] != part[ev[k]];
  return c;
}

/* The least cut over every placement of n vertices with x in cluster 0. */
static long brute_force_cut(int n, int x, int ne, const int* eu, const int* ev) {
  long best = -1;
  int part[32];
  for (unsigned m = 0; m < (1u << n); ++m) {
    if (__builtin_popcount(m) != x) continue;
    for (int v = 0; v < n; ++v) part[v] = (m >> v) & 1u ? 0 : 1;
    long c = cut_of(ne, eu, ev, part);
    if (best < 0 || c < best) best = c;
  }
  return best;
}

/* Checks that `comm` (a reordering of the first n world ranks' processes)
 * cuts no more than the identity and, with reorder, exactly the minimum. */
static void check_cut(MPI_Comm comm, int n, int ne, const int* eu, const int* ev, int reorder) {
  int cl[64], ident[64], x = 0;
  clusters_of(comm, n, cl);
  for (int p = 0; p < n; ++p) {
    ident[p] = p < nlow ? 0 : 1; /* comm_old = world: rank p's cluster */
    x += ident[p] == 0;
  }
  long now = cut_of(ne, eu, ev, cl), before = cut_of(ne, eu, ev, ident);
  EXPECT(now <= before, "cut %ld above the identity's %ld", now, before);
  if (reorder && n <= 20) {
    long best = brute_force_cut(n, x, ne, eu, ev);
    EXPECT(now == best, "reordered cut %ld, the least is %ld", now, best);
  }
  if (!reorder) EXPECT(now == before, "reorder=0 changed the order");
}

/* The dist-graph of suite_graph: v -> v+1 (weight 1), v -> v+nlow (weight
 * 1+nlow), mod n. Its weighted cut with vertex v in cluster part[v]. */
static long dist_cut(int n, const int* part) {
  long c = 0;
  for (int v = 0; v < n; ++v)
    c += (part[v] != part[(v + 1) % n]) + (long)(1 + nlow) * (part[v] != part[(v + nlow) % n]);
  return c;
}

/* Its least weighted cut over every placement of n vertices with x in cluster 0. */
static long dist_best_cut(int n, int x) {
  long best = -1;
  int part[32];
  for (unsigned m = 0; m < (1u << n); ++m) {
    if (__builtin_popcount(m) != x) continue;
    for (int v = 0; v < n; ++v) part[v] = (m >> v) & 1u ? 0 : 1;
    long c = dist_cut(n, part);
    if (best < 0 || c < best) best = c;
  }
  return best;
}

/* ---------------------------------------------------------- topo_graph -- */

static void check_permutation(MPI_Comm comm, int newrank, int n) {
  int* all = xmalloc(sizeof(int) * size);
  CHECK_MPI(MMPI_Allgather(&newrank, 1, MPI_INT, all, 1, MPI_INT, comm));
  int seen[64] = {0};
  for (int p = 0; p < size; ++p) {
    if (p >= n) {
      EXPECT(all[p] == MPI_UNDEFINED, "rank %d beyond the graph got %d", p, all[p]);
      continue;
    }
    EXPECT(all[p] >= 0 && all[p] < n && !seen[all[p]], "rank %d mapped to %d twice", p, all[p]);
    seen[all[p]] = 1;
  }
  free(all);
}

/* dist_reorder: the job runs with MMPI_DIST_GRAPH_REORDER=1 (suite
 * topo_graph_distreorder), so reorder must move dist-graph vertices. */
static void suite_graph(int dist_reorder) {
  int n = size;
  /* A ring with chords to the rank half-way round: edges cross the bridge. */
  int index[64], edges[256], ne = 0, eu[256], ev[256];
  for (int v = 0; v < n; ++v) {
    int nb[3] = {(v + 1) % n, (v + n - 1) % n, (v + n / 2) % n};
    for (int k = 0; k < 3; ++k) {
      if (nb[k] == v) continue;
      edges[ne] = nb[k];
      eu[ne] = v;
      ev[ne] = nb[k];
      ++ne;
    }
    index[v] = ne;
  }
  for (int reorder = 0; reorder <= 1; ++reorder) {
    CASE("Graph_create reorder=%d", reorder);
    MPI_Comm g;
    CHECK_MPI(MMPI_Graph_create(MMPI_COMM_WORLD, n, index, edges, reorder, &g));
    int status, nn, nedges, me;
    CHECK_MPI(MMPI_Topo_test(g, &status));
    EXPECT(status == MPI_GRAPH, "Topo_test gave %d", status);
    CHECK_MPI(MMPI_Graphdims_get(g, &nn, &nedges));
    EXPECT(nn == n && nedges == ne, "Graphdims_get %d %d", nn, nedges);
    int gi[64], ge[256];
    CHECK_MPI(MMPI_Graph_get(g, n, ne, gi, ge));
    EXPECT(!memcmp(gi, index, sizeof(int) * n) && !memcmp(ge, edges, sizeof(int) * ne),
           "Graph_get differs");
    CHECK_MPI(MMPI_Comm_rank(g, &me));
    int cnt, nbs[8];
    CHECK_MPI(MMPI_Graph_neighbors_count(g, me, &cnt));
    int lo = me ? index[me - 1] : 0;
    EXPECT(cnt == index[me] - lo, "neighbours count %d", cnt);
    CHECK_MPI(MMPI_Graph_neighbors(g, me, 8, nbs));
    EXPECT(!memcmp(nbs, edges + lo, sizeof(int) * cnt), "neighbours differ");
    check_cut(g, n, ne, eu, ev, reorder);
    /* The graph communicator works for point-to-point along its edges. */
    int token = me * 7 + 1, got = -1;
    CHECK_MPI(MMPI_Sendrecv(&token, 1, MPI_INT, nbs[0], 5, &got, 1, MPI_INT, MPI_ANY_SOURCE, 5, g,
                            MPI_STATUS_IGNORE));
    EXPECT(got % 7 == 1, "token %d", got);
    MPI_Comm d;
    CHECK_MPI(MMPI_Comm_dup(g, &d));
    CHECK_MPI(MMPI_Topo_test(d, &status));
    EXPECT(status == MPI_GRAPH, "dup lost the graph (%d)", status);
    CHECK_MPI(MMPI_Comm_free(&d));
    CHECK_MPI(MMPI_Comm_free(&g));
  }
  CASE("Graph_map");
  int nr;
  CHECK_MPI(MMPI_Graph_map(MMPI_COMM_WORLD, n, index, edges, &nr));
  check_permutation(MMPI_COMM_WORLD, nr, n);

  /* Cartesian 2 x (n/2) periodic, the 5-point stencil shape. */
  if (n % 2 == 0 && n <= 20) {
    int dims[2] = {2, n / 2}, periods[2] = {1, 1};
    int cu[128], cv[128], cn = 0;
    for (int r = 0; r < n; ++r) {
      int row = r / dims[1], col = r % dims[1];
      int nb[4] = {((row + 1) % 2) * dims[1] + col, ((row + 1) % 2) * dims[1] + col,
                   row * dims[1] + (col + dims[1] - 1) % dims[1],
                   row * dims[1] + (col + 1) % dims[1]};
      for (int k = 0; k < 4; ++k)
        if (nb[k] != r) cu[cn] = r, cv[cn] = nb[k], ++cn;
    }
    for (int reorder = 0; reorder <= 1; ++reorder) {
      CASE("Cart_create 2x%d reorder=%d", n / 2, reorder);
      MPI_Comm c;
      CHECK_MPI(MMPI_Cart_create(MMPI_COMM_WORLD, 2, dims, periods, reorder, &c));
      check_cut(c, n, cn, cu, cv, reorder);
      CHECK_MPI(MMPI_Comm_free(&c));
    }
    CASE("Cart_map");
    CHECK_MPI(MMPI_Cart_map(MMPI_COMM_WORLD, 2, dims, periods, &nr));
    check_permutation(MMPI_COMM_WORLD, nr, n);
  }

  /* Distributed graphs: rank r sends to r+1 and to r+nlow (across the
   * bridge), weighted by the distance. */
  for (int variant = 0; variant < 4; ++variant) {
    int reorder = variant & 1, adjacent = variant >> 1;
    CASE("Dist_graph_create%s reorder=%d", adjacent ? "_adjacent" : "", reorder);
    int out[2] = {(rank + 1) % n, (rank + nlow) % n};
    int in[2] = {(rank + n - 1) % n, (rank + n - nlow) % n};
    int ow[2] = {1, 1 + nlow}, iw[2] = {1, 1 + nlow};
    MPI_Comm d;
    if (adjacent) {
      CHECK_MPI(MMPI_Dist_graph_create_adjacent(MMPI_COMM_WORLD, 2, in, iw, 2, out, ow,
                                                MPI_INFO_NULL, reorder, &d));
    } else {
      int deg = 2;
      CHECK_MPI(MMPI_Dist_graph_create(MMPI_COMM_WORLD, 1, &rank, &deg, out, ow, MPI_INFO_NULL,
                                       reorder, &d));
    }
    int status, indeg, outdeg, weighted, me;
    CHECK_MPI(MMPI_Topo_test(d, &status));
    EXPECT(status == MPI_DIST_GRAPH, "Topo_test gave %d", status);
    CHECK_MPI(MMPI_Comm_rank(d, &me));
    CHECK_MPI(MMPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
    EXPECT(indeg == 2 && outdeg == 2 && weighted, "counts %d %d %d", indeg, outdeg, weighted);
    int s[2], sw[2], t[2], tw[2];
    CHECK_MPI(MMPI_Dist_graph_neighbors(d, 2, s, sw, 2, t, tw));
    /* Vertex me's adjacency, whichever process holds it now. */
    int eo[2] = {(me + 1) % n, (me + nlow) % n}, ei[2] = {(me + n - 1) % n, (me + n - nlow) % n};
    /* Destinations as given: one node per rank, so its own order. */
    for (int k = 0; k < 2; ++k)
      EXPECT(t[k] == eo[k] && tw[k] == 1 + (k ? nlow : 0), "destination %d: %d w %d", k, t[k],
             tw[k]);
    /* Sources: as given (adjacent), or in the global edge order (create). */
    int has = (s[0] == ei[0] && s[1] == ei[1]) || (s[0] == ei[1] && s[1] == ei[0]);
    EXPECT(has, "sources %d %d, expected %d %d", s[0], s[1], ei[0], ei[1]);
    if (adjacent) EXPECT(s[0] == ei[0] && sw[0] == 1, "source order");
    /* The weighted cut of the new order (vertex v at new rank v, in the
     * cluster of the process that holds it) against the identity's. */
    int cl[64], id[64], x = 0;
    clusters_of(d, n, cl);
    for (int v = 0; v < n; ++v) x += (id[v] = v < nlow ? 0 : 1) == 0;
    long wnow = dist_cut(n, cl), wbefore = dist_cut(n, id);
    if (reorder && dist_reorder) {
      /* Reordering must reach the least weighted cut over every placement,
       * and this graph's least is below the identity's (3+5: 14 < 26), so
       * keeping the identity fails here. */
      long best = dist_best_cut(n, x);
      EXPECT(best < wbefore, "graph has no better placement (%ld, identity %ld)", best, wbefore);
      EXPECT(wnow == best, "reordered weighted cut %ld, the least is %ld (identity %ld)", wnow,
             best, wbefore);
    } else {
      /* reorder=0, or MMPI_DIST_GRAPH_REORDER off: vertex v stays at rank v. */
      EXPECT(!memcmp(cl, id, sizeof(int) * n), "vertices moved (weighted cut %ld, identity %ld)",
             wnow, wbefore);
    }
    CHECK_MPI(MMPI_Comm_free(&d));
  }
  CASE("Topo_test on world");
  int st;
  CHECK_MPI(MMPI_Topo_test(MMPI_COMM_WORLD, &st));
  EXPECT(st == MPI_UNDEFINED, "world has topology %d", st);
  int dummy;
  EXPECT(MMPI_Graphdims_get(MMPI_COMM_WORLD, &dummy, &dummy) != MPI_SUCCESS,
         "Graphdims_get on a communicator without a graph succeeded");
}

/* ------------------------------------------------------- topo_neighbor -- */

#define SENTINEL 0x5a5a5a5a
static int value(int sender, int block, int e) { return (sender * 64 + block) * 1000003 + e; }

/* Everyone's in- and out-lists (degree `deg` each), gathered. */
struct lists {
  int deg;
  int cart;      /* Cartesian: pairs of (-1, +1) neighbours per dimension */
  int *in, *out; /* [rank * deg + i] */
};

/* Which block of sender s lands in my receive block i: the k-th message s
 * sends me, k counting my earlier receives from s. Messages go in list
 * order, except on a Cartesian communicator, where each dimension's +1
 * block goes before its -1 block: where both neighbours are one process,
 * the block sent to the +1 side lands in the -1 slot (MPICH
 * coll/ring_neighbor_alltoall). */
static int sender_block(const struct lists* L, int me, int i) {
  int s = L->in[me * L->deg + i], k = 0;
  for (int j = 0; j < i; ++j) k += L->in[me * L->deg + j] == s;
  for (int q = 0; q < L->deg; ++q) {
    int m = L->cart ? q ^ 1 : q;
    if (L->out[s * L->deg + m] == me && k-- == 0) return m;
  }
  FAIL("rank %d sends no block %d to %d", s, i, me);
  return -1;
}

/* Runs all ten neighbourhood collectives on `comm` (degree deg, lists L)
 * with `count` ints per block; ragged counts for the v/w variants. */
static void neighbor_cases(MPI_Comm comm, const struct lists* L, int count, const char* name) {
  int me, deg = L->deg;
  MMPI_Comm_rank(comm, &me);
  int stride =
      2 * count + deg + 1; /* room for the ragged counts (up to count + deg - 1) and a gap */
  int* send = xmalloc(sizeof(int) * deg * stride);
  int* recv = xmalloc(sizeof(int) * deg * stride);
  int sc[16], sd[16], rc[16], rd[16];
  MPI_Aint sdb[16], rdb[16];
  MPI_Datatype st[16], rt[16];
  for (int nbk = 0; nbk < 2; ++nbk)
    for (int op = 0; op < 5; ++op) {
      static const char* names[] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                    "alltoallw"};
      CASE("%s %sneighbor_%s count %d", name, nbk ? "I" : "", names[op], count);
      for (int i = 0; i < deg * stride; ++i) recv[i] = SENTINEL;
      int ragged = op == 1 || op == 3 || op == 4;
      for (int m = 0; m < deg; ++m) {
        int bs = op <= 1 ? 0 : m; /* allgather sends block 0 to all */
        sc[m] = ragged && op != 1 ? count + m : count;
        sd[m] = m * stride;
        sdb[m] = (MPI_Aint)sd[m] * (MPI_Aint)sizeof(int);
        st[m] = MPI_INT;
        for (int e = 0; e < stride; ++e) send[m * stride + e] = value(me, bs ? m : 0, e);
      }
      for (int i = 0; i < deg; ++i) {
        int s = L->in[me * deg + i];
        int m = s == MPI_PROC_NULL ? 0 : sender_block(L, me, i);
        rc[i] = (op == 3 || op == 4) ? count + m : count;
        rd[i] = i * stride + 1; /* a one-int gap before each block */
        rdb[i] = (MPI_Aint)rd[i] * (MPI_Aint)sizeof(int);
        rt[i] = MPI_INT;
      }
      MPI_Request req;
      int ok;
      int* rb = recv;
      switch (op) {
        case 0:
          /* Contiguous blocks of `count`: use rd via a shifted buffer only for v. */
          ok =
              nbk ? MMPI_Ineighbor_allgather(send, count, MPI_INT, recv, count, MPI_INT, comm, &req)
                  : MMPI_Neighbor_allgather(send, count, MPI_INT, recv, count, MPI_INT, comm);
          break;
        case 1:
          ok = nbk ? MMPI_Ineighbor_allgatherv(send, count, MPI_INT, recv, rc, rd, MPI_INT, comm,
                                               &req)
                   : MMPI_Neighbor_allgatherv(send, count, MPI_INT, recv, rc, rd, MPI_INT, comm);
          break;
        case 2:
          ok = nbk ? MMPI_Ineighbor_alltoall(send, stride, MPI_INT, recv, stride, MPI_INT, comm,
                                             &req)
                   : MMPI_Neighbor_alltoall(send, stride, MPI_INT, recv, stride, MPI_INT, comm);
          break;
        case 3:
          ok = nbk ? MMPI_Ineighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm,
                                              &req)
                   : MMPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm);
          break;
        default:
          ok = nbk ? MMPI_Ineighbor_alltoallw(send, sc, sdb, st, recv, rc, rdb, rt, comm, &req)
                   : MMPI_Neighbor_alltoallw(send, sc, sdb, st, recv, rc, rdb, rt, comm);
      }
      if (ok != MPI_SUCCESS) FAIL("returned %d", ok);
      if (nbk) CHECK_MPI(MMPI_Wait(&req, MPI_STATUS_IGNORE));
      /* Every int of the receive buffer: data in each block, sentinel elsewhere. */
      for (int i = 0; i < deg; ++i) {
        int s = L->in[me * deg + i];
        int m = s == MPI_PROC_NULL ? -1 : sender_block(L, me, i);
        int at = op == 0 ? i * count : op == 2 ? i * stride : rd[i];
        int n = op == 0 ? count : op == 2 ? stride : rc[i];
        for (int e = 0; e < n; ++e) {
          int want = m < 0 ? SENTINEL : value(s, op <= 1 ? 0 : m, e);
          EXPECT(rb[at + e] == want, "block %d from %d elem %d: %d, expected %d", i, s, e,
                 rb[at + e], want);
        }
        if (op != 0 && op != 2) EXPECT(rb[at - 1] == SENTINEL, "gap before block %d written", i);
      }
      if (op == 0)
        for (int e = deg * count; e < deg * stride; ++e)
          EXPECT(recv[e] == SENTINEL, "past the blocks written at %d", e);
    }
  free(send);
  free(recv);
}

static void gather_lists(MPI_Comm comm, int deg, const int* in, const int* out, struct lists* L) {
  int n;
  MMPI_Comm_size(comm, &n);
  int topo = MPI_UNDEFINED;
  CHECK_MPI(MMPI_Topo_test(comm, &topo));
  L->deg = deg;
  L->cart = topo == MPI_CART;
  L->in = xmalloc(sizeof(int) * n * deg);
  L->out = xmalloc(sizeof(int) * n * deg);
  CHECK_MPI(MMPI_Allgather(in, deg, MPI_INT, L->in, deg, MPI_INT, comm));
  CHECK_MPI(MMPI_Allgather(out, deg, MPI_INT, L->out, deg, MPI_INT, comm));
}

static void suite_neighbor(void) {
  static const int counts[] = {0, 3, 5000}; /* 5000 ints: past the eager limit */
  /* 2-D periodic Cartesian (Dims_create's shape), reorder 0 and 1. */
  for (int reorder = 0; reorder <= 1; ++reorder) {
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    CHECK_MPI(MMPI_Dims_create(size, 2, dims));
    MPI_Comm c;
    CASE("Cart_create reorder=%d", reorder);
    CHECK_MPI(MMPI_Cart_create(MMPI_COMM_WORLD, 2, dims, periods, reorder, &c));
    int in[4], out[4];
    for (int d = 0; d < 2; ++d) CHECK_MPI(MMPI_Cart_shift(c, d, 1, &in[2 * d], &in[2 * d + 1]));
    memcpy(out, in, sizeof in);
    struct lists L;
    gather_lists(c, 4, in, out, &L);
    char name[64];
    snprintf(name, sizeof name, "cart %dx%d reorder=%d", dims[0], dims[1], reorder);
    for (int k = 0; k < 3; ++k) neighbor_cases(c, &L, counts[k], name);
    free(L.in);
    free(L.out);
    CHECK_MPI(MMPI_Comm_free(&c));
  }
  /* Non-periodic Cartesian: MPI_PROC_NULL neighbours move nothing. */
  {
    int dims[2] = {0, 0}, periods[2] = {0, 1};
    CHECK_MPI(MMPI_Dims_create(size, 2, dims));
    MPI_Comm c;
    CHECK_MPI(MMPI_Cart_create(MMPI_COMM_WORLD, 2, dims, periods, 0, &c));
    int in[4], out[4];
    for (int d = 0; d < 2; ++d) CHECK_MPI(MMPI_Cart_shift(c, d, 1, &in[2 * d], &in[2 * d + 1]));
    memcpy(out, in, sizeof in);
    struct lists L;
    gather_lists(c, 4, in, out, &L);
    neighbor_cases(c, &L, 3, "cart non-periodic");
    free(L.in);
    free(L.out);
    CHECK_MPI(MMPI_Comm_free(&c));
  }
  /* Dist-graph across the bridge: r -> r+1, r+nlow, r+nlow (twice: a
   * multigraph), and to itself. */
  {
    int out[4] = {(rank + 1) % size, (rank + nlow) % size, (rank + nlow) % size, rank};
    int in[4] = {(rank + size - 1) % size, (rank + size - nlow) % size, (rank + size - nlow) % size,
                 rank};
    MPI_Comm d;
    CASE("Dist_graph_create_adjacent");
    CHECK_MPI(MMPI_Dist_graph_create_adjacent(MMPI_COMM_WORLD, 4, in, MPI_UNWEIGHTED, 4, out,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d));
    struct lists L;
    gather_lists(d, 4, in, out, &L);
    for (int k = 0; k < 3; ++k) neighbor_cases(d, &L, counts[k], "dist-graph");
    free(L.in);
    free(L.out);
    CHECK_MPI(MMPI_Comm_free(&d));
  }
  CASE("no topology");
  int x = 0, y[8];
  EXPECT(MMPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MMPI_COMM_WORLD) != MPI_SUCCESS,
         "a neighbourhood collective on a communicator without topology succeeded");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s topo_graph|topo_graph_distreorder|topo_neighbor\n", argv[0]);
    return 2;
  }
  MMPI_Init(&argc, &argv);
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* The low cluster's size: ranks below it are in cluster A. */
  const char* x = getenv("MMPI_NP_LOW");
  nlow = x ? atoi(x) : size;
  if (size > 20) {
    if (rank == 0) fprintf(stderr, "mmpi_topo_itest: at most 20 ranks\n");
    MMPI_Abort(MMPI_COMM_WORLD, 2);
  }
  if (!strcmp(argv[1], "topo_graph"))
    suite_graph(0);
  else if (!strcmp(argv[1], "topo_graph_distreorder"))
    suite_graph(1);
  else if (!strcmp(argv[1], "topo_neighbor"))
    suite_neighbor();
  else
    FAIL("unknown suite %s", argv[1]);
  long long total = 0;
  MMPI_Reduce(&checks, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD);
  if (rank == 0)
    printf("PASS %s %lld checks on %d ranks (%d+%d)\n", argv[1], total, size, nlow, size - nlow);
  MMPI_Finalize();
  return 0;
}
