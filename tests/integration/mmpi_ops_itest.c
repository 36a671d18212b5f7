/* Integration test of the calls added for issue 12, run across two clusters
 * by zipper-run. Usage: mmpi_ops_itest SUITE
 *   ops_v:    Gatherv, Scatterv, Allgatherv, Alltoallw (+ argument errors)
 *   ops_scan: Scan, Exscan, Reduce_scatter
 *   ops_nbc:  the non-blocking collectives, several outstanding at once,
 *             interleaved with blocking collectives and point-to-point
 * Prints "PASS <suite> ..." on rank 0 when every rank passed; a mismatch
 * prints FAIL with the case and aborts the job.
 *
 * Every case runs at roots {0, x-1, x, x+y-1}, for counts from 0 to over the
 * rendezvous threshold, on MPI_INT, MPI_DOUBLE and a non-contiguous vector
 * type (2 ints in a 3-int extent: the gap must stay untouched). Receive
 * buffers are filled with a sentinel byte first, and every byte is checked
 * afterwards: data where data belongs, sentinel elsewhere. References are
 * computed on each rank from every rank's input (a deterministic function of
 * rank, element and case), reductions folded in rank order by the test's own
 * code; the non-commutative operation (composition of affine maps mod 2^32)
 * fails for any other order. Doubles hold multiples of 1/8 below 2^20, so
 * their sums are exact in any order and compared bit for bit. */
#include <mmpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, nlow;
static long long checks;
static char where[256];

#define FAIL(...)                                                                  \
  do {                                                                             \
    fprintf(stderr, "FAIL rank %d %s:%d [%s]: ", rank, __FILE__, __LINE__, where); \
    fprintf(stderr, __VA_ARGS__);                                                  \
    fprintf(stderr, "\n");                                                         \
    MMPI_Abort(MMPI_COMM_WORLD, 1);                                                \
  } while (0)
#define CASE(...) snprintf(where, sizeof where, __VA_ARGS__)
#define CHECK_MPI(call)                                         \
  do {                                                          \
    int rc_ = (call);                                           \
    if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_); \
  } while (0)
#define EXPECT_RC(want, call)                                                  \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_ != (want)) FAIL("%s returned %d, expected %s", #call, rc_, #want); \
    ++checks;                                                                  \
  } while (0)

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) FAIL("out of memory for %zu bytes", n);
  return p;
}

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
static uint64_t H(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return mix(mix(mix(a) ^ b) ^ (c << 20) ^ d);
}

/* ---------------------------------------------------------------- kinds -- */

enum { K_INT, K_DOUBLE, K_VEC, K_AFFINE, NKINDS };
struct kind {
  const char* name;
  MPI_Datatype type;
  size_t extent; /* bytes per element */
  int nvals;     /* values per element */
  size_t off[2]; /* byte offsets of the values */
  size_t vsize;  /* bytes per value */
} K[NKINDS];

static void init_kinds(void) {
  MPI_Datatype vec, aff;
  CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
  MPI_Datatype vec3;
  CHECK_MPI(MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &vec3));
  CHECK_MPI(MPI_Type_commit(&vec3));
  MPI_Type_free(&vec);
  CHECK_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &aff));
  CHECK_MPI(MPI_Type_commit(&aff));
  struct kind k[NKINDS] = {
      [K_INT] = {"INT", MPI_INT, sizeof(int), 1, {0, 0}, sizeof(int)},
      [K_DOUBLE] = {"DOUBLE", MPI_DOUBLE, sizeof(double), 1, {0, 0}, sizeof(double)},
      [K_VEC] = {"vector(2,1,2,INT)", vec3, 3 * sizeof(int), 2, {0, 2 * sizeof(int)}, sizeof(int)},
      [K_AFFINE] =
          {"affine", aff, 2 * sizeof(unsigned), 2, {0, sizeof(unsigned)}, sizeof(unsigned)},
  };
  memcpy(K, k, sizeof k);
}

/* Value j of element i of a block identified by (a, b, seed). */
static void put(int k, void* buf, size_t i, uint64_t a, uint64_t b, uint64_t seed) {
  char* e = (char*)buf + i * K[k].extent;
  for (int j = 0; j < K[k].nvals; ++j) {
    const uint64_t h = H(a, b, seed, i * 2 + j);
    if (k == K_DOUBLE) {
      const double d = (double)(h % 8000000) / 8.0 - 500000.0;
      memcpy(e + K[k].off[j], &d, sizeof d);
    } else if (k == K_AFFINE) {
      const unsigned u = j == 0 ? (unsigned)(h % 1000) * 2 + 1 : (unsigned)(h >> 7);
      memcpy(e + K[k].off[j], &u, sizeof u);
    } else {
      const int v = (int)(h % 2000001) - 1000000;
      memcpy(e + K[k].off[j], &v, sizeof v);
    }
  }
}
static void gen(int k, void* buf, size_t n, uint64_t a, uint64_t b, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) put(k, buf, i, a, b, seed);
}

static const unsigned char kSentinel = 0xEE;
static void* alloc_fill(size_t bytes) {
  void* p = xmalloc(bytes);
  memset(p, kSentinel, bytes);
  return p;
}

/* Checks n elements at buf against ref (values) and that the gaps of the
 * element (non-contiguous types) still hold the sentinel. */
static void verify_block(int k, const void* buf, const void* ref, size_t n, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    const char* g = (const char*)buf + i * K[k].extent;
    const char* r = (const char*)ref + i * K[k].extent;
    size_t at = 0;
    for (int j = 0; j < K[k].nvals; ++j) {
      for (; at < K[k].off[j]; ++at)
        if ((unsigned char)g[at] != kSentinel)
          FAIL("%s: element %zu: gap byte %zu written", what, i, at);
      if (memcmp(g + at, r + at, K[k].vsize) != 0)
        FAIL("%s: element %zu value %d differs from the reference", what, i, j);
      at += K[k].vsize;
    }
    for (; at < K[k].extent; ++at)
      if ((unsigned char)g[at] != kSentinel)
        FAIL("%s: element %zu: gap byte %zu written", what, i, at);
    ++checks;
  }
}
/* Checks that bytes [from, to) of buf hold the sentinel. */
static void verify_untouched(const void* buf, size_t from, size_t to, const char* what) {
  for (size_t b = from; b < to; ++b)
    if (((const unsigned char*)buf)[b] != kSentinel) FAIL("%s: byte %zu written", what, b);
  ++checks;
}

/* The reference value layout of n elements (sentinel in gaps, like a
 * freshly filled receive buffer after a correct receive). */
static void* ref_block(int k, size_t n, uint64_t a, uint64_t b, uint64_t seed) {
  void* p = alloc_fill(n * K[k].extent);
  gen(k, p, n, a, b, seed);
  return p;
}

static int roots[4], nroots;
static void init_roots(void) {
  const int cand[4] = {0, nlow - 1, nlow, size - 1};
  nroots = 0;
  for (int i = 0; i < 4; ++i) {
    int dup = cand[i] < 0 || cand[i] >= size;
    for (int j = 0; j < nroots; ++j) dup |= roots[j] == cand[i];
    if (!dup) roots[nroots++] = cand[i];
  }
}

/* Block sizes: pattern 0 all zero, 1 small and uneven (some zero), 2 large
 * (rendezvous through zipperd). */
static int block_count(int pattern, int r) {
  switch (pattern) {
    case 0:
      return 0;
    case 1:
      return (r * 7 + 3) % 5;
    default:
      return 30000 + r * 17;
  }
}

/* Displacements (elements) placing blocks in reverse rank order with a
 * one-element gap between them; returns the total span. */
static int reverse_displs(const int* counts, int* displs) {
  int at = 0;
  for (int r = size - 1; r >= 0; --r) {
    displs[r] = at;
    at += counts[r] + 1;
  }
  return at;
}

/* ------------------------------------------------------------- ops_v ---- */

static void test_gatherv(int k, int pattern, int root, int in_place) {
  CASE("gatherv %s pattern %d root %d%s", K[k].name, pattern, root, in_place ? " in place" : "");
  const uint64_t seed = 1000 + k * 10 + pattern;
  int *counts = xmalloc(size * sizeof(int)), *displs = xmalloc(size * sizeof(int));
  for (int r = 0; r < size; ++r) counts[r] = block_count(pattern, r);
  const int span = reverse_displs(counts, displs);
  void* send = ref_block(k, counts[rank], rank, 0, seed);
  void* recv = alloc_fill((size_t)span * K[k].extent);
  const int am_root = rank == root;
  if (am_root && in_place)
    gen(k, (char*)recv + displs[rank] * K[k].extent, counts[rank], rank, 0, seed);
  CHECK_MPI(MMPI_Gatherv(am_root && in_place ? MPI_IN_PLACE : send, counts[rank], K[k].type, recv,
                         counts, displs, K[k].type, root, MMPI_COMM_WORLD));
  if (am_root) {
    size_t at = 0;
    for (int r = size - 1; r >= 0; --r) {
      void* ref = ref_block(k, counts[r], r, 0, seed);
      verify_block(k, (char*)recv + displs[r] * K[k].extent, ref, counts[r], "gatherv block");
      verify_untouched(recv, (displs[r] + counts[r]) * K[k].extent,
                       (displs[r] + counts[r] + 1) * K[k].extent, "gatherv gap");
      free(ref);
      at += counts[r] + 1;
    }
  } else {
    verify_untouched(recv, 0, (size_t)span * K[k].extent, "gatherv non-root recvbuf");
  }
  free(send);
  free(recv);
  free(counts);
  free(displs);
}

static void test_scatterv(int k, int pattern, int root, int in_place) {
  CASE("scatterv %s pattern %d root %d%s", K[k].name, pattern, root, in_place ? " in place" : "");
  const uint64_t seed = 2000 + k * 10 + pattern;
  int *counts = xmalloc(size * sizeof(int)), *displs = xmalloc(size * sizeof(int));
  for (int r = 0; r < size; ++r) counts[r] = block_count(pattern, r);
  const int span = reverse_displs(counts, displs);
  const int am_root = rank == root;
  void* send = alloc_fill((size_t)span * K[k].extent);
  if (am_root)
    for (int r = 0; r < size; ++r)
      gen(k, (char*)send + displs[r] * K[k].extent, counts[r], r, 0, seed);
  void* recv = alloc_fill(counts[rank] * K[k].extent + K[k].extent);
  CHECK_MPI(MMPI_Scatterv(send, counts, displs, K[k].type,
                          am_root && in_place ? MPI_IN_PLACE : recv, counts[rank], K[k].type, root,
                          MMPI_COMM_WORLD));
  if (am_root && in_place) {
    verify_untouched(recv, 0, (counts[rank] + 1) * K[k].extent, "scatterv in place: recvbuf");
  } else {
    void* ref = ref_block(k, counts[rank], rank, 0, seed);
    verify_block(k, recv, ref, counts[rank], "scatterv block");
    verify_untouched(recv, counts[rank] * K[k].extent, (counts[rank] + 1) * K[k].extent,
                     "scatterv past the block");
    free(ref);
  }
  free(send);
  free(recv);
  free(counts);
  free(displs);
}

static void test_allgatherv(int k, int pattern, int in_place) {
  CASE("allgatherv %s pattern %d%s", K[k].name, pattern, in_place ? " in place" : "");
  const uint64_t seed = 3000 + k * 10 + pattern;
  int *counts = xmalloc(size * sizeof(int)), *displs = xmalloc(size * sizeof(int));
  for (int r = 0; r < size; ++r) counts[r] = block_count(pattern, r);
  const int span = reverse_displs(counts, displs);
  void* send = ref_block(k, counts[rank], rank, 0, seed);
  void* recv = alloc_fill((size_t)span * K[k].extent);
  if (in_place) gen(k, (char*)recv + displs[rank] * K[k].extent, counts[rank], rank, 0, seed);
  CHECK_MPI(MMPI_Allgatherv(in_place ? MPI_IN_PLACE : send, counts[rank], K[k].type, recv, counts,
                            displs, K[k].type, MMPI_COMM_WORLD));
  for (int r = 0; r < size; ++r) {
    void* ref = ref_block(k, counts[r], r, 0, seed);
    verify_block(k, (char*)recv + displs[r] * K[k].extent, ref, counts[r], "allgatherv block");
    verify_untouched(recv, (displs[r] + counts[r]) * K[k].extent,
                     (displs[r] + counts[r] + 1) * K[k].extent, "allgatherv gap");
    free(ref);
  }
  free(send);
  free(recv);
  free(counts);
  free(displs);
}

/* Alltoallw: s sends n(s, r) pairs of ints to r, as n vector elements
 * (odd s + r) or 2n ints; r receives 2n ints. In place, n is symmetric. */
static int pairs(int s, int r, int big, int in_place) {
  const int n = in_place ? (s + r) % 4 : (s * 3 + r) % 4;
  return big ? n * 9000 : n;
}
static void test_alltoallw(int big, int in_place) {
  CASE("alltoallw %s%s", big ? "large" : "small", in_place ? " in place" : "");
  const uint64_t seed = 4000 + big * 2 + in_place;
  int *sc = xmalloc(size * sizeof(int)), *sd = xmalloc(size * sizeof(int));
  int *rc = xmalloc(size * sizeof(int)), *rd = xmalloc(size * sizeof(int));
  MPI_Datatype *st = xmalloc(size * sizeof(MPI_Datatype)),
               *rt = xmalloc(size * sizeof(MPI_Datatype));
  size_t sbytes = 0, rbytes = 0;
  for (int r = 0; r < size; ++r) {
    const int vec = (rank + r) % 2 && !in_place;
    const int n = pairs(rank, r, big, in_place);
    st[r] = vec ? K[K_VEC].type : MPI_INT;
    sc[r] = vec ? n : 2 * n;
    sd[r] = (int)sbytes;
    sbytes += vec ? n * K[K_VEC].extent : 2 * n * sizeof(int);
    sbytes += 8; /* a gap */
    rt[r] = MPI_INT;
    rc[r] = 2 * pairs(r, rank, big, in_place);
    /* blocks in reverse order, with gaps */
  }
  for (int r = size - 1; r >= 0; --r) {
    rd[r] = (int)rbytes;
    rbytes += rc[r] * sizeof(int) + 4;
  }
  char* send = alloc_fill(sbytes);
  char* recv = alloc_fill(rbytes);
  for (int r = 0; r < size; ++r) {
    const int n = pairs(rank, r, big, in_place);
    int* vals = xmalloc(2 * n * sizeof(int) + 1);
    gen(K_INT, vals, 2 * n, rank, r, seed);
    if (in_place) {
      memcpy(recv + rd[r], vals, 2 * n * sizeof(int));
    } else if (st[r] == MPI_INT) {
      memcpy(send + sd[r], vals, 2 * n * sizeof(int));
    } else {
      for (int i = 0; i < n; ++i) {
        memcpy(send + sd[r] + i * K[K_VEC].extent, &vals[2 * i], sizeof(int));
        memcpy(send + sd[r] + i * K[K_VEC].extent + 2 * sizeof(int), &vals[2 * i + 1], sizeof(int));
      }
    }
    free(vals);
  }
  CHECK_MPI(MMPI_Alltoallw(in_place ? MPI_IN_PLACE : send, sc, sd, st, recv, rc, rd, rt,
                           MMPI_COMM_WORLD));
  for (int s = 0; s < size; ++s) {
    const int n = pairs(s, rank, big, in_place);
    void* ref = ref_block(K_INT, 2 * n, s, rank, seed);
    verify_block(K_INT, recv + rd[s], ref, 2 * n, "alltoallw block");
    verify_untouched(recv, rd[s] + 2 * n * sizeof(int), rd[s] + 2 * n * sizeof(int) + 4,
                     "alltoallw gap");
    free(ref);
  }
  free(send);
  free(recv);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(st);
  free(rt);
}

static void test_v_errors(void) {
  CASE("argument errors");
  int* counts = xmalloc(size * sizeof(int));
  int* displs = xmalloc(size * sizeof(int));
  for (int r = 0; r < size; ++r) counts[r] = displs[r] = 0;
  int x = 0;
  EXPECT_RC(MPI_ERR_ROOT,
            MMPI_Gatherv(&x, 0, MPI_INT, &x, counts, displs, MPI_INT, size, MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_ROOT,
            MMPI_Scatterv(&x, counts, displs, MPI_INT, &x, 0, MPI_INT, -1, MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_COUNT,
            MMPI_Gatherv(&x, -1, MPI_INT, &x, counts, displs, MPI_INT, 0, MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_TYPE, MMPI_Allgatherv(&x, 0, MPI_DATATYPE_NULL, &x, counts, displs, MPI_INT,
                                          MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_COMM,
            MMPI_Allgatherv(&x, 0, MPI_INT, &x, counts, displs, MPI_INT, MPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_OP, MMPI_Scan(&x, &x, 1, MPI_INT, MPI_OP_NULL, MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_OP, MMPI_Exscan(&x, &x, 1, MPI_INT, MPI_OP_NULL, MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_COUNT, MMPI_Scan(&x, &x, -2, MPI_INT, MPI_SUM, MMPI_COMM_WORLD));
  counts[size - 1] = -1;
  EXPECT_RC(MPI_ERR_COUNT, MMPI_Reduce_scatter(&x, &x, counts, MPI_INT, MPI_SUM, MMPI_COMM_WORLD));
  EXPECT_RC(MPI_ERR_COUNT,
            MMPI_Allgatherv(&x, 0, MPI_INT, &x, counts, displs, MPI_INT, MMPI_COMM_WORLD));
  if (size > 1) {
    /* MPI_IN_PLACE only at the root. */
    const int nonroot = rank == 0 ? 1 : 0;
    (void)nonroot;
    if (rank != 0)
      EXPECT_RC(MPI_ERR_BUFFER, MMPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, &x, counts, displs, MPI_INT,
                                             0, MMPI_COMM_WORLD));
    if (rank != 0)
      EXPECT_RC(MPI_ERR_BUFFER, MMPI_Scatterv(&x, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT,
                                              0, MMPI_COMM_WORLD));
  }
  int* cs = xmalloc(size * sizeof(int));
  MPI_Datatype* ts = xmalloc(size * sizeof(MPI_Datatype));
  for (int r = 0; r < size; ++r) {
    cs[r] = 0;
    ts[r] = MPI_INT;
  }
  ts[size - 1] = MPI_DATATYPE_NULL;
  EXPECT_RC(MPI_ERR_TYPE, MMPI_Alltoallw(&x, cs, cs, ts, &x, cs, cs, ts, MMPI_COMM_WORLD));
  free(cs);
  free(ts);
  free(counts);
  free(displs);
}

static void suite_v(void) {
  test_v_errors();
  for (int k = K_INT; k <= K_VEC; ++k)
    for (int pattern = 0; pattern < 3; ++pattern) {
      for (int i = 0; i < nroots; ++i)
        for (int in_place = 0; in_place < 2; ++in_place) {
          test_gatherv(k, pattern, roots[i], in_place);
          test_scatterv(k, pattern, roots[i], in_place);
        }
      test_allgatherv(k, pattern, 0);
      test_allgatherv(k, pattern, 1);
    }
  for (int big = 0; big < 2; ++big)
    for (int in_place = 0; in_place < 2; ++in_place) test_alltoallw(big, in_place);
}

/* ---------------------------------------------------------- ops_scan ---- */

/* inout = in o inout, composition of affine maps: associative, not commutative. */
static void affine_compose(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const unsigned* f = in;
  unsigned* g = inout;
  for (int i = 0; i < *len; ++i) {
    const unsigned a = f[2 * i] * g[2 * i], b = f[2 * i] * g[2 * i + 1] + f[2 * i + 1];
    g[2 * i] = a;
    g[2 * i + 1] = b;
  }
}
static MPI_Op op_affine;

struct red {
  int k;
  MPI_Op op;
  const char* name;
};
static struct red reds[4];
static void init_reds(void) {
  CHECK_MPI(MMPI_Op_create(affine_compose, 0, &op_affine));
  struct red r[4] = {{K_INT, MPI_SUM, "INT SUM"},
                     {K_DOUBLE, MPI_SUM, "DOUBLE SUM"},
                     {K_INT, MPI_MAX, "INT MAX"},
                     {K_AFFINE, 0, "affine compose (non-commutative)"}};
  r[3].op = op_affine;
  memcpy(reds, r, sizeof r);
}

/* acc = acc (op) x, element-wise, by the test's own code. */
static void ref_fold(const struct red* rd, void* acc, const void* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (rd->k == K_DOUBLE) {
      ((double*)acc)[i] += ((const double*)x)[i];
    } else if (rd->k == K_AFFINE) {
      unsigned* g = (unsigned*)acc + 2 * i; /* acc then x: x o acc */
      const unsigned* f = (const unsigned*)x + 2 * i;
      /* MPI order: (acc op x) with op(in, inout) = in o inout applied as inout = acc o x */
      const unsigned a = g[0] * f[0], b = g[0] * f[1] + g[1];
      g[0] = a;
      g[1] = b;
    } else if (rd->op == MPI_MAX) {
      int* a = (int*)acc + i;
      const int v = ((const int*)x)[i];
      if (v > *a) *a = v;
    } else {
      int* a = (int*)acc + i;
      *a = (int)((unsigned)*a + (unsigned)((const int*)x)[i]);
    }
  }
}

/* The reduction in rank order of ranks [0, upto] of element range [from, from + n). */
static void* ref_prefix(const struct red* rd, int upto, size_t from, size_t n, size_t total,
                        uint64_t seed) {
  void* acc = alloc_fill(n * K[rd->k].extent);
  void* x = xmalloc(total * K[rd->k].extent);
  for (int r = 0; r <= upto; ++r) {
    gen(rd->k, x, total, r, 0, seed);
    if (r == 0)
      memcpy(acc, (char*)x + from * K[rd->k].extent, n * K[rd->k].extent);
    else
      ref_fold(rd, acc, (char*)x + from * K[rd->k].extent, n);
  }
  free(x);
  return acc;
}

static void test_scan(int ri, int count, int exclusive, int in_place) {
  const struct red* rd = &reds[ri];
  CASE("%s %s count %d%s", exclusive ? "exscan" : "scan", rd->name, count,
       in_place ? " in place" : "");
  const uint64_t seed = 5000 + ri * 100 + count + exclusive;
  const size_t ext = K[rd->k].extent;
  void* send = ref_block(rd->k, count, rank, 0, seed);
  void* recv = alloc_fill((count + 1) * ext);
  if (in_place) gen(rd->k, recv, count, rank, 0, seed);
  CHECK_MPI((exclusive ? MMPI_Exscan : MMPI_Scan)(in_place ? MPI_IN_PLACE : send, recv, count,
                                                  K[rd->k].type, rd->op, MMPI_COMM_WORLD));
  if (exclusive && rank == 0) {
    /* Undefined by MPI; libmmpi leaves it as it was. */
    void* ref = in_place ? ref_block(rd->k, count, rank, 0, seed) : alloc_fill(count * ext);
    if (memcmp(recv, ref, count * ext) != 0) FAIL("exscan changed rank 0's recvbuf");
    free(ref);
  } else {
    void* ref = ref_prefix(rd, exclusive ? rank - 1 : rank, 0, count, count, seed);
    verify_block(rd->k, recv, ref, count, "scan result");
    free(ref);
  }
  verify_untouched(recv, count * ext, (count + 1) * ext, "past the scan result");
  free(send);
  free(recv);
}

static void test_reduce_scatter(int ri, int pattern, int in_place) {
  const struct red* rd = &reds[ri];
  CASE("reduce_scatter %s pattern %d%s", rd->name, pattern, in_place ? " in place" : "");
  const uint64_t seed = 6000 + ri * 10 + pattern;
  const size_t ext = K[rd->k].extent;
  int* counts = xmalloc(size * sizeof(int));
  size_t total = 0, mine_at = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = pattern == 2 ? 3000 + r * 5 : block_count(pattern, r);
    if (r == rank) mine_at = total;
    total += counts[r];
  }
  void* send = ref_block(rd->k, total, rank, 0, seed);
  void* recv = alloc_fill((in_place ? total : (size_t)counts[rank] + 1) * ext);
  if (in_place) gen(rd->k, recv, total, rank, 0, seed);
  CHECK_MPI(MMPI_Reduce_scatter(in_place ? MPI_IN_PLACE : send, recv, counts, K[rd->k].type, rd->op,
                                MMPI_COMM_WORLD));
  void* ref = ref_prefix(rd, size - 1, mine_at, counts[rank], total, seed);
  verify_block(rd->k, recv, ref, counts[rank], "reduce_scatter block");
  if (!in_place)
    verify_untouched(recv, counts[rank] * ext, (counts[rank] + 1) * ext, "past the block");
  free(ref);
  free(send);
  free(recv);
  free(counts);
}

static void suite_scan(void) {
  const int cnts[] = {0, 1, 7, 20000};
  for (int ri = 0; ri < 4; ++ri) {
    for (int c = 0; c < 4; ++c)
      for (int ex = 0; ex < 2; ++ex)
        for (int ip = 0; ip < 2; ++ip) test_scan(ri, cnts[c], ex, ip);
    for (int pattern = 0; pattern < 3; ++pattern)
      for (int ip = 0; ip < 2; ++ip) test_reduce_scatter(ri, pattern, ip);
  }
}

/* --------------------------------------------------------------- main --- */

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s ops_v|ops_scan|ops_nbc\n", argv[0]);
    return 2;
  }
  CHECK_MPI(MMPI_Init(&argc, &argv));
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  const char* np_low = getenv("MMPI_NP_LOW");
  nlow = np_low ? atoi(np_low) : 0;
  if (nlow < 1 || nlow >= size) FAIL("MMPI_NP_LOW is not set by the launcher");
  init_kinds();
  init_roots();
  init_reds();
  const char* suite = argv[1];
  if (strcmp(suite, "ops_v") == 0)
    suite_v();
  else if (strcmp(suite, "ops_scan") == 0)
    suite_scan();
  else
    FAIL("unknown suite %s", suite);
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  long long all = 0;
  CHECK_MPI(MMPI_Allreduce(&checks, &all, 1, MPI_LONG_LONG, MPI_SUM, MMPI_COMM_WORLD));
  if (rank == 0) printf("PASS %s (%lld checks on %d ranks)\n", suite, all, size);
  CHECK_MPI(MMPI_Finalize());
  return 0;
}
