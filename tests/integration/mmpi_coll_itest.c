/* Collectives integration test for libmmpi, run across two clusters by
 * zipper-run. Usage: mmpi_coll_itest SUITE[,SUITE...][@COMM]
 *   SUITE: coll_bcast, coll_reduce, coll_allreduce, coll_alltoall, coll_misc, all
 *   COMM: a communicator variant of itest_comm.h (default MMPI_COMM_WORLD);
 *   x and y below are then the communicator's members in each cluster
 * Prints "PASS <suite> ..." on rank 0 when every rank passed; any mismatch
 * prints FAIL with the case and aborts the job.
 *
 * Every algorithm and every n (MMPIX_Coll_set) and the automatic choice run
 * roots {0, x-1, x, x+y-1}, counts {0, 1, odd} for every datatype (and
 * operation; for the reductions the datatype x operation product rotates over
 * the algorithms, see small_case_runs), and >= 1 MiB counts.
 * Buffers get one spare element filled with a sentinel, checked afterwards,
 * so an overrun or a write for count 0 fails.
 *
 * Reference: each rank regenerates every rank's input (inputs are a
 * deterministic function of rank, element and case) and reduces them in rank
 * order with MPI_Reduce_local, i.e. native Open MPI's operation over the same
 * data. Integer, bitwise, logical, MIN/MAX, MAXLOC/MINLOC and user-operation
 * results must match exactly. Floating-point SUM/PROD are compared with the
 * tolerance |got - ref| <= p * p * 128 * eps (eps = FLT_EPSILON or
 * DBL_EPSILON, p = rank count, 128 bounds every input's magnitude): the
 * rounding error of any summation order of p terms (Higham, (p-1) eps sum|x|),
 * since the hierarchical order differs from the reference's. Allreduce
 * results must also be bit-identical on every rank (hash compared). */
#include <float.h>
#include <math.h>
#include <mmpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest_comm.h"

static int nmin;
static int verbose; /* MMPI_COLL_ITEST_VERBOSE=1: rank 0 prints each case */

#define CASE(...)                                                   \
  do {                                                              \
    snprintf(where, sizeof where, __VA_ARGS__);                     \
    if (verbose && rank == 0) fprintf(stderr, "case: %s\n", where); \
  } while (0)
#include "itest_check.h"

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) FAIL("out of memory for %zu bytes", n);
  return p;
}

/* ---------------------------------------------------------------- types -- */

struct float_int {
  float v;
  int i;
};
struct double_int {
  double v;
  int i;
};
struct long_int {
  long v;
  int i;
};
struct two_int {
  int v;
  int i;
};
struct short_int {
  short v;
  int i;
};
struct affine {
  unsigned a, b;
}; /* f(x) = a*x + b (mod 2^32) */

enum kind {
  K_CHAR,
  K_SCHAR,
  K_UCHAR,
  K_BYTE,
  K_SHORT,
  K_USHORT,
  K_INT,
  K_UINT,
  K_LONG,
  K_ULONG,
  K_LLONG,
  K_ULLONG,
  K_FLOAT,
  K_DOUBLE,
  K_FINTEGER,
  K_FREAL,
  K_FDOUBLE,
  K_FLOGICAL,
  K_FLOAT_INT,
  K_DOUBLE_INT,
  K_LONG_INT,
  K_2INT,
  K_SHORT_INT,
  K_AFFINE,
  NKINDS
};
enum cls { C_CHAR, C_SINT, C_UINT, C_BYTE, C_FLOAT, C_FINT, C_LOGICAL, C_PAIR, C_AFFINE };

static struct kinfo {
  const char* name;
  MPI_Datatype type;
  size_t csize; /* sizeof the C element */
  int cls;
  int eps_double; /* floating: 1 = double precision */
} K[NKINDS];

static MPI_Datatype affine_type;

static void init_kinds(void) {
  CHECK_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type));
  CHECK_MPI(MPI_Type_commit(&affine_type));
  struct kinfo k[NKINDS] = {
      [K_CHAR] = {"CHAR", MPI_CHAR, sizeof(char), C_CHAR, 0},
      [K_SCHAR] = {"SIGNED_CHAR", MPI_SIGNED_CHAR, sizeof(signed char), C_SINT, 0},
      [K_UCHAR] = {"UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, sizeof(unsigned char), C_UINT, 0},
      [K_BYTE] = {"BYTE", MPI_BYTE, 1, C_BYTE, 0},
      [K_SHORT] = {"SHORT", MPI_SHORT, sizeof(short), C_SINT, 0},
      [K_USHORT] = {"UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, sizeof(unsigned short), C_UINT, 0},
      [K_INT] = {"INT", MPI_INT, sizeof(int), C_SINT, 0},
      [K_UINT] = {"UNSIGNED", MPI_UNSIGNED, sizeof(unsigned), C_UINT, 0},
      [K_LONG] = {"LONG", MPI_LONG, sizeof(long), C_SINT, 0},
      [K_ULONG] = {"UNSIGNED_LONG", MPI_UNSIGNED_LONG, sizeof(unsigned long), C_UINT, 0},
      [K_LLONG] = {"LONG_LONG", MPI_LONG_LONG, sizeof(long long), C_SINT, 0},
      [K_ULLONG] = {"UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long),
                    C_UINT, 0},
      [K_FLOAT] = {"FLOAT", MPI_FLOAT, sizeof(float), C_FLOAT, 0},
      [K_DOUBLE] = {"DOUBLE", MPI_DOUBLE, sizeof(double), C_FLOAT, 1},
      [K_FINTEGER] = {"INTEGER", MPI_INTEGER, sizeof(int), C_FINT, 0},
      [K_FREAL] = {"REAL", MPI_REAL, sizeof(float), C_FLOAT, 0},
      [K_FDOUBLE] = {"DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, sizeof(double), C_FLOAT, 1},
      [K_FLOGICAL] = {"LOGICAL", MPI_LOGICAL, sizeof(int), C_LOGICAL, 0},
      [K_FLOAT_INT] = {"FLOAT_INT", MPI_FLOAT_INT, sizeof(struct float_int), C_PAIR, 0},
      [K_DOUBLE_INT] = {"DOUBLE_INT", MPI_DOUBLE_INT, sizeof(struct double_int), C_PAIR, 0},
      [K_LONG_INT] = {"LONG_INT", MPI_LONG_INT, sizeof(struct long_int), C_PAIR, 0},
      [K_2INT] = {"2INT", MPI_2INT, sizeof(struct two_int), C_PAIR, 0},
      [K_SHORT_INT] = {"SHORT_INT", MPI_SHORT_INT, sizeof(struct short_int), C_PAIR, 0},
      [K_AFFINE] = {"contiguous(2,UNSIGNED)", affine_type, sizeof(struct affine), C_AFFINE, 0},
  };
  memcpy(K, k, sizeof k);
  /* The C structs must have MPI's extents, or the test itself is wrong. */
  for (int i = 0; i < NKINDS; ++i) {
    MPI_Aint lb, ext;
    CHECK_MPI(MPI_Type_get_extent(K[i].type, &lb, &ext));
    if (lb != 0 || (size_t)ext != K[i].csize)
      FAIL("datatype %s: extent %ld lb %ld, C element %zu bytes", K[i].name, (long)ext, (long)lb,
           K[i].csize);
  }
}

/* ------------------------------------------------------------ operations -- */

enum opid {
  O_SUM,
  O_PROD,
  O_MIN,
  O_MAX,
  O_LAND,
  O_LOR,
  O_LXOR,
  O_BAND,
  O_BOR,
  O_BXOR,
  O_MAXLOC,
  O_MINLOC,
  O_USER_NC,
  O_USER_C,
  NOPS
};
static const char* op_name[NOPS] = {"SUM",
                                    "PROD",
                                    "MIN",
                                    "MAX",
                                    "LAND",
                                    "LOR",
                                    "LXOR",
                                    "BAND",
                                    "BOR",
                                    "BXOR",
                                    "MAXLOC",
                                    "MINLOC",
                                    "user(affine compose, non-commutative)",
                                    "user(sum mod 1000003, commutative)"};
static MPI_Op ops[NOPS];

/* inout = in o inout, composition of affine maps: associative, not commutative. */
static void affine_compose(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const struct affine* f = in;
  struct affine* g = inout;
  for (int i = 0; i < *len; ++i) {
    const unsigned a = f[i].a * g[i].a, b = f[i].a * g[i].b + f[i].b;
    g[i].a = a;
    g[i].b = b;
  }
}
static void modsum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const long long* a = in;
  long long* b = inout;
  for (int i = 0; i < *len; ++i) b[i] = (a[i] + b[i]) % 1000003;
}

static void init_ops(void) {
  const MPI_Op pre[] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX,  MPI_LAND,   MPI_LOR,
                        MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
  for (int i = 0; i < O_USER_NC; ++i) ops[i] = pre[i];
  CHECK_MPI(MMPI_Op_create(affine_compose, 0, &ops[O_USER_NC]));
  CHECK_MPI(MMPI_Op_create(modsum, 1, &ops[O_USER_C]));
}

/* MPI-3.1 §5.9.2: which operations apply to which datatype groups. */
static int valid(int k, int o) {
  switch (K[k].cls) {
    case C_SINT:
    case C_UINT:
      return o <= O_BXOR || (o == O_USER_C && k == K_LLONG);
    case C_FINT:
      return o <= O_MAX || (o >= O_BAND && o <= O_BXOR);
    case C_BYTE:
      return o >= O_BAND && o <= O_BXOR;
    case C_FLOAT:
      return o <= O_MAX;
    case C_LOGICAL:
      return o >= O_LAND && o <= O_LXOR;
    case C_PAIR:
      return o == O_MAXLOC || o == O_MINLOC;
    case C_AFFINE:
      return o == O_USER_NC;
    default:
      return 0;
  }
}

/* ---------------------------------------------------------------- values -- */

static uint64_t mix(uint64_t x) { /* splitmix64 finaliser */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Element i of rank r's input for case `seed` and operation o (o = -1: plain
 * data for the data-movement collectives). Values keep SUM and PROD of up to
 * 8 ranks inside every type's range and every magnitude <= 128. */
static void put(int k, int o, void* buf, size_t i, int r, uint64_t seed) {
  const uint64_t h = mix(seed * 0x100000001B3ull ^ ((uint64_t)r << 48) ^ i);
  long long iv;
  double dv;
  switch (o) {
    case O_SUM:
      iv = K[k].cls == C_UINT ? (long long)(h % 7) : (long long)(h % 7) - 3;
      dv = (double)(h % 1001) / 7.0 - 70.0;
      break;
    case O_PROD:
      iv = (r % 4 == 0 && (h & 16)) ? 2 : (K[k].cls != C_UINT && h % 3 == 0 ? -1 : 1);
      dv = 1.0 + ((double)(h % 11) - 5.0) / 64.0 + 1.0 / 3000.0;
      break;
    case O_MIN:
    case O_MAX:
      iv = K[k].cls == C_UINT ? (long long)(h % 201) : (long long)(h % 201) - 100;
      dv = (double)(h % 2001) / 16.0 - 62.5 + 1.0 / 3.0;
      break;
    case O_LAND:
    case O_LOR:
    case O_LXOR:
      iv = K[k].cls == C_LOGICAL ? (h % 3 != 0) : (h % 3 == 0 ? 0 : (long long)(h % 5) + 1);
      dv = 0;
      break;
    case O_MAXLOC:
    case O_MINLOC:
      iv = (long long)(h % 5); /* many ties: the lowest index must win */
      dv = (double)iv;
      break;
    default:
      iv = (long long)h;
      dv = (double)(h % 100000) / 64.0;
  }
  const int idx = r * 3 + (int)((h >> 20) % 3);
  switch (k) {
    case K_CHAR:
      ((char*)buf)[i] = (char)iv;
      break;
    case K_SCHAR:
      ((signed char*)buf)[i] = (signed char)iv;
      break;
    case K_UCHAR:
    case K_BYTE:
      ((unsigned char*)buf)[i] = (unsigned char)iv;
      break;
    case K_SHORT:
      ((short*)buf)[i] = (short)iv;
      break;
    case K_USHORT:
      ((unsigned short*)buf)[i] = (unsigned short)iv;
      break;
    case K_INT:
    case K_FINTEGER:
    case K_FLOGICAL:
      ((int*)buf)[i] = (int)iv;
      break;
    case K_UINT:
      ((unsigned*)buf)[i] = (unsigned)iv;
      break;
    case K_LONG:
      ((long*)buf)[i] = (long)iv;
      break;
    case K_ULONG:
      ((unsigned long*)buf)[i] = (unsigned long)iv;
      break;
    case K_LLONG:
      ((long long*)buf)[i] = o == O_USER_C ? (long long)(h % 1000003) : iv;
      break;
    case K_ULLONG:
      ((unsigned long long*)buf)[i] = (unsigned long long)iv;
      break;
    case K_FLOAT:
    case K_FREAL:
      ((float*)buf)[i] = (float)dv;
      break;
    case K_DOUBLE:
    case K_FDOUBLE:
      ((double*)buf)[i] = dv;
      break;
    case K_FLOAT_INT:
      ((struct float_int*)buf)[i] = (struct float_int){(float)dv, idx};
      break;
    case K_DOUBLE_INT:
      ((struct double_int*)buf)[i] = (struct double_int){dv, idx};
      break;
    case K_LONG_INT:
      ((struct long_int*)buf)[i] = (struct long_int){(long)iv, idx};
      break;
    case K_2INT:
      ((struct two_int*)buf)[i] = (struct two_int){(int)iv, idx};
      break;
    case K_SHORT_INT:
      ((struct short_int*)buf)[i] = (struct short_int){(short)iv, idx};
      break;
    case K_AFFINE:
      ((struct affine*)buf)[i] = (struct affine){(unsigned)(h % 1000) * 2 + 1, (unsigned)(h >> 7)};
      break;
  }
}

static void gen(int k, int o, void* buf, size_t count, int r, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) put(k, o, buf, i, r, seed);
}

static const unsigned char kSentinel = 0xEE;
static void* alloc_elems(int k, size_t count) { /* count elements + a sentinel one */
  unsigned char* p = xmalloc((count + 1) * K[k].csize);
  memset(p, kSentinel, (count + 1) * K[k].csize);
  return p;
}
static void check_sentinel(int k, const void* buf, size_t count) {
  const unsigned char* s = (const unsigned char*)buf + count * K[k].csize;
  for (size_t b = 0; b < K[k].csize; ++b)
    if (s[b] != kSentinel) FAIL("wrote past element %zu (%s)", count, K[k].name);
}

/* Compares element i (the meaningful bytes: pair types have padding). */
static int same(int k, int o, const void* got, const void* ref, size_t i, double* err) {
  *err = 0;
  switch (k) {
    case K_FLOAT:
    case K_FREAL:
    case K_DOUBLE:
    case K_FDOUBLE: {
      const int dbl = K[k].eps_double;
      const double g = dbl ? ((const double*)got)[i] : ((const float*)got)[i];
      const double r = dbl ? ((const double*)ref)[i] : ((const float*)ref)[i];
      if (o != O_SUM && o != O_PROD) return memcmp(&g, &r, sizeof g) == 0;
      *err = fabs(g - r);
      return *err <= (double)size * size * 128.0 * (dbl ? DBL_EPSILON : FLT_EPSILON);
    }
#define PAIR(T)                                          \
  return ((const T*)got)[i].v == ((const T*)ref)[i].v && \
         ((const T*)got)[i].i == ((const T*)ref)[i].i
    case K_FLOAT_INT:
      PAIR(struct float_int);
    case K_DOUBLE_INT:
      PAIR(struct double_int);
    case K_LONG_INT:
      PAIR(struct long_int);
    case K_2INT:
      PAIR(struct two_int);
    case K_SHORT_INT:
      PAIR(struct short_int);
#undef PAIR
    default:
      return memcmp((const char*)got + i * K[k].csize, (const char*)ref + i * K[k].csize,
                    K[k].csize) == 0;
  }
}

static void verify(int k, int o, const void* got, const void* ref, size_t count, const char* what) {
  double err;
  for (size_t i = 0; i < count; ++i)
    if (!same(k, o, got, ref, i, &err))
      FAIL("%s: element %zu of %zu differs from the reference (abs error %g)", what, i, count, err);
  check_sentinel(k, got, count);
  ++checks;
}

/* Verifies plain data element by element against rank r's input. */
static void verify_from(int k, const void* got, size_t count, int r, uint64_t seed,
                        const char* what) {
  void* ref = xmalloc(K[k].csize * (count ? count : 1));
  gen(k, -1, ref, count, r, seed);
  double err;
  for (size_t i = 0; i < count; ++i)
    if (!same(k, -1, (const char*)got, ref, i, &err))
      FAIL("%s: element %zu of %zu (from rank %d) is wrong", what, i, count, r);
  free(ref);
  ++checks;
}

/* The reduction of every rank's input in rank order, computed locally. */
static void* reference(int k, int o, size_t count, uint64_t seed) {
  void* acc = alloc_elems(k, count);
  void* tmp = xmalloc(K[k].csize * (count ? count : 1));
  gen(k, o, acc, count, 0, seed);
  for (int r = 1; r < size; ++r) {
    gen(k, o, tmp, count, r, seed);
    /* tmp = acc o tmp, then acc = tmp: rank order for non-commutative ops */
    CHECK_MPI(MPI_Reduce_local(acc, tmp, (int)count, K[k].type, ops[o]));
    memcpy(acc, tmp, count * K[k].csize);
  }
  free(tmp);
  return acc;
}

/* ------------------------------------------------------ algorithm choice -- */

struct variant {
  const char* alg; /* NULL: automatic choice */
  int n;
};
/* Every algorithm of `coll`, each n in 1..min(x, y) for those that take n,
 * then the automatic choice. Returns the count. */
static int variants(const char* coll, struct variant* v) {
  int m = 0;
  if (!strcmp(coll, "bcast")) {
    v[m++] = (struct variant){"farfirst", 0};
    for (int n = 1; n <= nmin; ++n) v[m++] = (struct variant){"vandegeijn", n};
  } else if (!strcmp(coll, "allreduce")) {
    v[m++] = (struct variant){"two_tier", 0};
    for (int n = 1; n <= nmin; ++n) v[m++] = (struct variant){"rabenseifner", n};
  } else if (!strcmp(coll, "alltoall") || !strcmp(coll, "alltoallv")) {
    v[m++] = (struct variant){"direct", 0};
    for (int n = 1; n <= nmin; ++n) v[m++] = (struct variant){"aggregated", n};
  } else if (!strcmp(coll, "reduce")) {
    v[m++] = (struct variant){"leaders", 0};
  } else if (!strcmp(coll, "reduce_scatter_block")) {
    v[m++] = (struct variant){"via_allreduce", 0};
  } else {
    v[m++] = (struct variant){"two_level", 0};
  }
  v[m++] = (struct variant){NULL, 0};
  return m;
}
static void use(const char* coll, struct variant v) {
  CHECK_MPI(MMPIX_Coll_set(coll, v.alg ? v.alg : "", v.n));
}
static const char* vname(struct variant v, char* buf, size_t n) {
  if (!v.alg)
    snprintf(buf, n, "auto");
  else if (v.n)
    snprintf(buf, n, "%s n=%d", v.alg, v.n);
  else
    snprintf(buf, n, "%s", v.alg);
  return buf;
}

static int roots[4], nroots;
static void init_roots(void) {
  const int cand[4] = {0, nlow - 1, nlow, size - 1};
  for (int i = 0; i < 4; ++i) {
    if (cand[i] < 0 || cand[i] >= size) continue; /* a communicator inside one cluster */
    int dup = 0;
    for (int j = 0; j < nroots; ++j) dup |= roots[j] == cand[i];
    if (!dup) roots[nroots++] = cand[i];
  }
}

/* Element count of a >= 1 MiB buffer of kind k. */
static size_t big_count(int k) { return (1u << 20) / K[k].csize + 3; }

static const size_t kSmall[] = {0, 1, 1001};
#define NSMALL 3

/* ----------------------------------------------------------------- bcast -- */

static void bcast_case(int k, size_t count, int root, uint64_t seed) {
  void* buf = alloc_elems(k, count);
  if (rank == root) gen(k, -1, buf, count, root, seed);
  CHECK_MPI(MMPI_Bcast(buf, (int)count, K[k].type, root, comm));
  verify_from(k, buf, count, root, seed, "bcast");
  check_sentinel(k, buf, count);
  free(buf);
}

static void test_bcast(void) {
  struct variant v[16];
  const int nv = variants("bcast", v);
  char vn[64];
  for (int a = 0; a < nv; ++a) {
    use("bcast", v[a]);
    for (int ri = 0; ri < nroots; ++ri) {
      for (int k = 0; k < NKINDS; ++k)
        for (int s = 0; s < NSMALL; ++s) {
          CASE("bcast %s root %d %s count %zu", vname(v[a], vn, 64), roots[ri], K[k].name,
               kSmall[s]);
          bcast_case(k, kSmall[s], roots[ri], (uint64_t)(a * 1000 + ri * 100 + k * 3 + s));
        }
      const int big[] = {K_BYTE, K_DOUBLE, K_DOUBLE_INT, K_AFFINE};
      const int k = big[(a + ri) % 4];
      CASE("bcast %s root %d %s count %zu", vname(v[a], vn, 64), roots[ri], K[k].name,
           big_count(k));
      bcast_case(k, big_count(k), roots[ri], (uint64_t)(a * 1000 + ri * 100 + 99));
    }
  }
  use("bcast", (struct variant){NULL, 0});
}

/* ------------------------------------------------------- reduce/allreduce -- */

static int ncombos;
static int combo_k[NKINDS * NOPS], combo_o[NKINDS * NOPS];
static int kind_first[NKINDS]; /* the kind's first combination, -1: none */
static void init_combos(void) {
  for (int k = 0; k < NKINDS; ++k) {
    kind_first[k] = -1;
    for (int o = 0; o < NOPS; ++o)
      if (valid(k, o)) {
        if (kind_first[k] < 0) kind_first[k] = ncombos;
        combo_k[ncombos] = k;
        combo_o[ncombos++] = o;
      }
  }
}

/* Whether variant a of nv runs the small case (combination c, count index s,
 * root index ri; 0 where the collective has no root). Every (combination,
 * root, count) runs under one variant in turn, so the whole product is
 * checked once per layout; every variant still sees every datatype at the
 * largest small count with every root, and the non-commutative operation at
 * every count (algorithms order their steps differently). Running the whole
 * product under every variant took most of the suite's time and found
 * nothing the rotation does not reach. */
static int small_case_runs(int a, int nv, int c, int ri, int s) {
  /* For each (root, count), consecutive combinations take the variants in turn. */
  return (c + ncombos * (ri + nroots * s)) % nv == a ||
         (s == NSMALL - 1 && c == kind_first[combo_k[c]]) || combo_o[c] == O_USER_NC;
}

static void reduce_case(int k, int o, size_t count, int root, int in_place, uint64_t seed) {
  void* in = alloc_elems(k, count);
  void* out = alloc_elems(k, count);
  gen(k, o, rank == root && in_place ? out : in, count, rank, seed);
  CHECK_MPI(MMPI_Reduce(rank == root && in_place ? MPI_IN_PLACE : in, out, (int)count, K[k].type,
                        ops[o], root, comm));
  if (rank == root) {
    void* ref = reference(k, o, count, seed);
    verify(k, o, out, ref, count, "reduce");
    free(ref);
  } else {
    const unsigned char* b = out; /* a non-root's receive buffer is not touched */
    for (size_t i = 0; i < count * K[k].csize; ++i)
      if (b[i] != kSentinel) FAIL("reduce wrote into a non-root's receive buffer");
  }
  free(in);
  free(out);
}

static void test_reduce(void) {
  char vn[64];
  struct variant v[4];
  const int nv = variants("reduce", v);
  for (int a = 0; a < nv; ++a) {
    use("reduce", v[a]);
    for (int c = 0; c < ncombos; ++c) {
      const int k = combo_k[c], o = combo_o[c];
      for (int ri = 0; ri < nroots; ++ri)
        for (int s = 0; s < NSMALL; ++s) {
          if (!small_case_runs(a, nv, c, ri, s)) continue;
          const int in_place = (c + ri + s) % 3 == 0;
          CASE("reduce %s root %d %s %s count %zu%s", vname(v[a], vn, 64), roots[ri], K[k].name,
               op_name[o], kSmall[s], in_place ? " IN_PLACE" : "");
          reduce_case(k, o, kSmall[s], roots[ri], in_place, (uint64_t)(c * 100 + ri * 10 + s));
        }
      if ((c + a) % 4 == 0) { /* a quarter of the combinations at >= 1 MiB, roots rotating */
        const int root = roots[c % nroots];
        CASE("reduce %s root %d %s %s count %zu", vname(v[a], vn, 64), root, K[k].name, op_name[o],
             big_count(k));
        reduce_case(k, o, big_count(k), root, c % 8 == 0, (uint64_t)(c * 100 + 77));
      }
    }
  }
  use("reduce", (struct variant){NULL, 0});
}

static uint64_t hash_bytes(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ ((const unsigned char*)p)[i]) * 1099511628211ull;
  return h;
}

static void allreduce_case(int k, int o, size_t count, int in_place, uint64_t seed) {
  void* in = alloc_elems(k, count);
  void* out = alloc_elems(k, count);
  gen(k, o, in_place ? out : in, count, rank, seed);
  CHECK_MPI(MMPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int)count, K[k].type, ops[o], comm));
  void* ref = reference(k, o, count, seed);
  verify(k, o, out, ref, count, "allreduce");
  if (K[k].cls == C_FLOAT && count > 0) { /* bit-identical on every rank */
    unsigned long long h = hash_bytes(out, count * K[k].csize), hmin, hmax;
    CHECK_MPI(MMPI_Allreduce(&h, &hmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm));
    CHECK_MPI(MMPI_Allreduce(&h, &hmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    if (hmin != hmax) FAIL("allreduce results differ between ranks");
  }
  free(ref);
  free(in);
  free(out);
}

static void test_allreduce(void) {
  char vn[64];
  struct variant v[16];
  const int nv = variants("allreduce", v);
  for (int a = 0; a < nv; ++a) {
    use("allreduce", v[a]);
    for (int c = 0; c < ncombos; ++c) {
      const int k = combo_k[c], o = combo_o[c];
      for (int s = 0; s < NSMALL; ++s) {
        if (!small_case_runs(a, nv, c, 0, s)) continue;
        const int in_place = (c + s) % 2 == 0;
        CASE("allreduce %s %s %s count %zu%s", vname(v[a], vn, 64), K[k].name, op_name[o],
             kSmall[s], in_place ? " IN_PLACE" : "");
        allreduce_case(k, o, kSmall[s], in_place, (uint64_t)(a * 100000 + c * 10 + s));
      }
      /* >= 1 MiB: every combination once (variants rotating) and, for every
       * variant, the float and user-operation cases */
      if (c % nv == a || o == O_USER_NC || (k == K_DOUBLE && o == O_SUM)) {
        CASE("allreduce %s %s %s count %zu", vname(v[a], vn, 64), K[k].name, op_name[o],
             big_count(k));
        allreduce_case(k, o, big_count(k), c % 2, (uint64_t)(a * 100000 + c * 10 + 9));
      }
    }
  }
  use("allreduce", (struct variant){NULL, 0});
}

/* -------------------------------------------------------- alltoall(v) -- */

/* Block from rank s to rank d in case `seed`: rank s's input with a seed of its own. */
static uint64_t block_seed(uint64_t seed, int d) { return seed * 64 + (uint64_t)d; }

static void alltoall_case(int k, size_t count, int in_place, uint64_t seed) {
  const size_t cs = K[k].csize;
  void* in = alloc_elems(k, count * size);
  void* out = alloc_elems(k, count * size);
  char* blocks = in_place ? out : in;
  for (int d = 0; d < size; ++d)
    gen(k, -1, blocks + d * count * cs, count, rank, block_seed(seed, d));
  CHECK_MPI(MMPI_Alltoall(in_place ? MPI_IN_PLACE : in, (int)count, K[k].type, out, (int)count,
                          K[k].type, comm));
  for (int s = 0; s < size; ++s)
    verify_from(k, (char*)out + s * count * cs, count, s, block_seed(seed, rank), "alltoall");
  check_sentinel(k, out, count * size);
  free(in);
  free(out);
}

/* Uneven counts: rank s sends cnt(s, d) elements to d, zero for some pairs;
 * displacements leave a one-element gap between blocks. Symmetric in (s, d),
 * as MPI_IN_PLACE requires. */
static int a2av_count(int s, int d, int big) {
  const int c = (s * d + 2 * (s + d)) % 7;
  return big ? (int)((1u << 20) / 8 / size) + c * 1000 : (c == 3 ? 0 : c * 37 + (s == d));
}

static void alltoallv_case(int k, int big, int in_place, uint64_t seed) {
  const size_t cs = K[k].csize;
  int *sc = xmalloc(sizeof(int) * size), *sd = xmalloc(sizeof(int) * size);
  int *rc = xmalloc(sizeof(int) * size), *rd = xmalloc(sizeof(int) * size);
  size_t stot = 0, rtot = 0;
  for (int p = 0; p < size; ++p) {
    sc[p] = a2av_count(rank, p, big);
    rc[p] = a2av_count(p, rank, big);
    sd[p] = (int)stot;
    rd[p] = (int)rtot;
    stot += sc[p] + 1;
    rtot += rc[p] + 1;
  }
  void* in = alloc_elems(k, stot);
  void* out = alloc_elems(k, rtot);
  if (in_place) {
    /* MPI-2.2: the data to send is taken from recvbuf, laid out by
     * recvcounts/rdispls, so send and receive counts must match per pair */
    for (int d = 0; d < size; ++d)
      gen(k, -1, (char*)out + rd[d] * cs, rc[d], rank, block_seed(seed, d));
  } else {
    for (int d = 0; d < size; ++d)
      gen(k, -1, (char*)in + sd[d] * cs, sc[d], rank, block_seed(seed, d));
  }
  CHECK_MPI(MMPI_Alltoallv(in_place ? MPI_IN_PLACE : in, sc, sd, K[k].type, out, rc, rd, K[k].type,
                           comm));
  for (int s = 0; s < size; ++s) {
    verify_from(k, (char*)out + rd[s] * cs, rc[s], s, block_seed(seed, rank), "alltoallv");
    /* the gap element after each block must stay untouched */
    const unsigned char* gap = (const unsigned char*)out + (rd[s] + rc[s]) * cs;
    for (size_t b = 0; b < cs; ++b)
      if (gap[b] != kSentinel) FAIL("alltoallv wrote into the gap after the block from %d", s);
  }
  free(in);
  free(out);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void test_alltoall(void) {
  char vn[64];
  struct variant v[16];
  const int kinds[] = {K_CHAR, K_BYTE, K_SHORT, K_INT, K_DOUBLE, K_DOUBLE_INT, K_AFFINE};
  const int nk = sizeof kinds / sizeof kinds[0];
  const size_t bcounts[] = {0, 1, 333};
  int nv = variants("alltoall", v);
  for (int a = 0; a < nv; ++a) {
    use("alltoall", v[a]);
    for (int ki = 0; ki < nk; ++ki)
      for (int s = 0; s < 3; ++s)
        for (int ip = 0; ip < 2; ++ip) {
          const int k = kinds[ki];
          CASE("alltoall %s %s block %zu%s", vname(v[a], vn, 64), K[k].name, bcounts[s],
               ip ? " IN_PLACE" : "");
          alltoall_case(k, bcounts[s], ip, (uint64_t)(a * 1000 + ki * 10 + s * 2 + ip));
        }
    const int k = a % 2 ? K_BYTE : K_DOUBLE;
    const size_t bc = (1u << 20) / K[k].csize / size + 1; /* >= 1 MiB per rank */
    CASE("alltoall %s %s block %zu", vname(v[a], vn, 64), K[k].name, bc);
    alltoall_case(k, bc, 0, (uint64_t)(a * 1000 + 999));
  }
  use("alltoall", (struct variant){NULL, 0});

  nv = variants("alltoallv", v);
  for (int a = 0; a < nv; ++a) {
    use("alltoallv", v[a]);
    for (int ki = 0; ki < nk; ++ki)
      for (int ip = 0; ip < 2; ++ip) {
        const int k = kinds[ki];
        CASE("alltoallv %s %s uneven%s", vname(v[a], vn, 64), K[k].name, ip ? " IN_PLACE" : "");
        alltoallv_case(k, 0, ip, (uint64_t)(a * 1000 + ki * 10 + ip));
      }
    CASE("alltoallv %s DOUBLE uneven >= 1 MiB", vname(v[a], vn, 64));
    alltoallv_case(K_DOUBLE, 1, a % 2, (uint64_t)(a * 1000 + 999));
  }
  use("alltoallv", (struct variant){NULL, 0});
}

/* ------------------------------------------------------------------ misc -- */

/* A barrier must hold every rank until the last one arrives: one rank enters
 * 200 ms late; every other rank must spend at least that long inside. */
static void test_barrier(void) {
  for (int ri = 0; ri < nroots; ++ri) {
    const int late = roots[ri];
    CASE("barrier, rank %d late", late);
    CHECK_MPI(MMPI_Barrier(comm));
    if (rank == late) usleep(200 * 1000);
    const double t0 = MMPI_Wtime();
    CHECK_MPI(MMPI_Barrier(comm));
    const double t = MMPI_Wtime() - t0;
    if (rank != late && t < 0.19)
      FAIL("left the barrier after %.3f s, before rank %d entered", t, late);
    ++checks;
  }
  for (int i = 0; i < 200; ++i) CHECK_MPI(MMPI_Barrier(comm)); /* back to back */
}

static void test_gather_scatter(void) {
  const int kinds[] = {K_BYTE, K_INT, K_DOUBLE_INT, K_AFFINE};
  const size_t counts[] = {0, 1, 1001, 0 /* big */};
  for (int ki = 0; ki < 4; ++ki)
    for (int ci = 0; ci < 4; ++ci)
      for (int ri = 0; ri < nroots; ++ri) {
        const int k = kinds[ki], root = roots[ri], ip = (ki + ci + ri) % 2;
        const size_t cs = K[k].csize;
        const size_t count = ci == 3 ? (1u << 20) / cs / size + 1 : counts[ci];
        const uint64_t seed = (uint64_t)(ki * 1000 + ci * 10 + ri);
        /* gather: every rank's block lands at the root in rank order */
        CASE("gather root %d %s count %zu%s", root, K[k].name, count, ip ? " IN_PLACE" : "");
        void* mine = alloc_elems(k, count);
        void* all = alloc_elems(k, count * size);
        gen(k, -1, mine, count, rank, seed);
        if (rank == root && ip) memcpy((char*)all + root * count * cs, mine, count * cs);
        CHECK_MPI(MMPI_Gather(rank == root && ip ? MPI_IN_PLACE : mine, (int)count, K[k].type, all,
                              (int)count, K[k].type, root, comm));
        if (rank == root) {
          for (int s = 0; s < size; ++s)
            verify_from(k, (char*)all + s * count * cs, count, s, seed, "gather");
          check_sentinel(k, all, count * size);
        }
        /* allgather */
        CASE("allgather %s count %zu%s", K[k].name, count, ip ? " IN_PLACE" : "");
        memset(all, kSentinel, (count * size + 1) * cs);
        if (ip) memcpy((char*)all + rank * count * cs, mine, count * cs);
        CHECK_MPI(MMPI_Allgather(ip ? MPI_IN_PLACE : mine, (int)count, K[k].type, all, (int)count,
                                 K[k].type, comm));
        for (int s = 0; s < size; ++s)
          verify_from(k, (char*)all + s * count * cs, count, s, seed, "allgather");
        check_sentinel(k, all, count * size);
        /* scatter: block d of the root's buffer goes to rank d */
        CASE("scatter root %d %s count %zu%s", root, K[k].name, count, ip ? " IN_PLACE" : "");
        memset(mine, kSentinel, (count + 1) * cs);
        if (rank == root)
          for (int d = 0; d < size; ++d)
            gen(k, -1, (char*)all + d * count * cs, count, root, block_seed(seed, d));
        CHECK_MPI(MMPI_Scatter(all, (int)count, K[k].type, rank == root && ip ? MPI_IN_PLACE : mine,
                               (int)count, K[k].type, root, comm));
        if (rank == root && ip)
          verify_from(k, (char*)all + root * count * cs, count, root, block_seed(seed, root),
                      "scatter (root's own block, in place)");
        else {
          verify_from(k, mine, count, root, block_seed(seed, rank), "scatter");
          check_sentinel(k, mine, count);
        }
        free(mine);
        free(all);
      }
}

static void test_reduce_scatter_block(void) {
  const int cases[][2] = {{K_INT, O_SUM},
                          {K_DOUBLE, O_SUM},
                          {K_UCHAR, O_BXOR},
                          {K_DOUBLE_INT, O_MAXLOC},
                          {K_AFFINE, O_USER_NC}};
  const size_t counts[] = {0, 1, 101};
  for (int c = 0; c < 5; ++c)
    for (int ci = 0; ci < 3; ++ci)
      for (int ip = 0; ip < 2; ++ip) {
        const int k = cases[c][0], o = cases[c][1];
        const size_t count = counts[ci], cs = K[k].csize;
        const uint64_t seed = (uint64_t)(c * 100 + ci * 2 + ip);
        CASE("reduce_scatter_block %s %s recvcount %zu%s", K[k].name, op_name[o], count,
             ip ? " IN_PLACE" : "");
        void* in = alloc_elems(k, count * size);
        void* out = alloc_elems(k, ip ? count * size : count);
        gen(k, o, ip ? out : in, count * size, rank, seed);
        CHECK_MPI(MMPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : in, out, (int)count, K[k].type,
                                            ops[o], comm));
        void* ref = reference(k, o, count * size, seed);
        double err;
        for (size_t i = 0; i < count; ++i)
          if (!same(k, o, out, (char*)ref + rank * count * cs, i, &err))
            FAIL("element %zu of %zu differs from the reference", i, count);
        if (!ip) check_sentinel(k, out, count);
        ++checks;
        free(ref);
        free(in);
        free(out);
      }
}

/* Bad arguments: a clear error code on every rank, no communication, and the
 * next collective still works. */
static void test_errors(void) {
  CASE("error cases");
  int x = 1, y = 0;
  if (MMPIX_Coll_set("no_such_collective", "two_level", 0) != MPI_ERR_ARG)
    FAIL("MMPIX_Coll_set accepted an unknown collective");
  if (MMPIX_Coll_set("bcast", "no_such_algorithm", 0) != MPI_ERR_ARG)
    FAIL("MMPIX_Coll_set accepted an unknown algorithm");
  if (MMPIX_Coll_set("allreduce", "farfirst", 0) != MPI_ERR_ARG)
    FAIL("MMPIX_Coll_set accepted a bcast algorithm for allreduce");
  if (MMPIX_Coll_set("bcast", "vandegeijn", -1) != MPI_ERR_ARG)
    FAIL("MMPIX_Coll_set accepted n = -1");
  if (MMPI_Bcast(&x, 1, MPI_INT, size, comm) != MPI_ERR_ROOT)
    FAIL("bcast with root = size did not return MPI_ERR_ROOT");
  if (MMPI_Bcast(&x, 1, MPI_INT, -1, comm) != MPI_ERR_ROOT)
    FAIL("bcast with root = -1 did not return MPI_ERR_ROOT");
  if (MMPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, size + 3, comm) != MPI_ERR_ROOT)
    FAIL("reduce with root = size + 3 did not return MPI_ERR_ROOT");
  if (MMPI_Bcast(&x, -1, MPI_INT, 0, comm) != MPI_ERR_COUNT)
    FAIL("bcast with count -1 did not return MPI_ERR_COUNT");
  if (MMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, comm) != MPI_ERR_OP)
    FAIL("allreduce with MPI_OP_NULL did not return MPI_ERR_OP");
  if (MMPI_Allreduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, comm) != MPI_ERR_TYPE)
    FAIL("allreduce with MPI_DATATYPE_NULL did not return MPI_ERR_TYPE");
#ifndef ITEST_TRANSPARENT /* unported (unprefix.py): every handle is the layer's */
  MPI_Comm foreign;       /* a native communicator libmmpi did not make */
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &foreign));
  if (MMPI_Barrier(foreign) != MPI_ERR_COMM) FAIL("barrier on a foreign communicator did not fail");
  if (MMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, foreign) != MPI_ERR_COMM)
    FAIL("allreduce on a foreign communicator did not fail");
  CHECK_MPI(MPI_Comm_free(&foreign));
#endif
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_SELF));
  y = -1;
  CHECK_MPI(MMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MMPI_COMM_SELF));
  if (y != x) FAIL("allreduce on MMPI_COMM_SELF: %d, expected %d", y, x);
  x = rank + 1;
  CHECK_MPI(MMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
  if (y != size * (size + 1) / 2) FAIL("allreduce after errors: %d", y);
  ++checks;
}

static void test_misc(void) {
  test_barrier();
  test_gather_scatter();
  test_reduce_scatter_block();
  test_errors();
}

static void test_all(void);
static const struct {
  const char* name;
  void (*fn)(void);
} tests[] = {
    {"coll_bcast", test_bcast},         {"coll_reduce", test_reduce},
    {"coll_allreduce", test_allreduce}, {"coll_alltoall", test_alltoall},
    {"coll_misc", test_misc},           {"all", test_all},
};
static void test_all(void) {
  for (size_t i = 0; i + 1 < sizeof tests / sizeof tests[0]; ++i) tests[i].fn();
}

static void fail_setup(const char* why) { FAIL("%s", why); }

int main(int argc, char** argv) {
  CHECK_MPI(MMPI_Init(&argc, &argv));
  /* The suites check the codes of erroneous calls: errors return (the
   * default, MPI_ERRORS_ARE_FATAL, would end the job); derived
   * communicators inherit it. */
  CHECK_MPI(MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_RETURN));
  verbose = getenv("MMPI_COLL_ITEST_VERBOSE") != NULL;
  const char* np_low = getenv("MMPI_NP_LOW");
  int world = 0;
  MMPI_Comm_size(MMPI_COMM_WORLD, &world);
  if (!np_low || atoi(np_low) < 1 || atoi(np_low) >= world)
    FAIL("MMPI_NP_LOW is not set by the launcher");
  char which[256] = "all";
  if (argc > 1) snprintf(which, sizeof which, "%s", argv[1]);
  const char* full = argc > 1 ? argv[1] : "all"; /* SUITE@COMM, as PASS names it */
  if (!itest_comm_setup(which, fail_setup)) FAIL("unknown communicator in '%s'", full);
  MMPI_Comm_rank(comm, &rank);
  MMPI_Comm_size(comm, &size);
  nlow = 0; /* x: the communicator's members in the low cluster */
  for (int r = 0; r < size; ++r) nlow += is_low(r);
  /* The roots {0, x-1, x, size-1} sit at the clusters' boundary only when the
   * low cluster's members come first; the suites need no more than that. */
  nmin = nlow < size - nlow ? nlow : size - nlow;
  init_kinds();
  init_ops();
  init_combos();
  init_roots();
  /* SUITE may be a comma-separated list, run in order in one job. */
  const char* at = strchr(full, '@');
  int ran = 0;
  for (char *save = NULL, *t = strtok_r(which, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    size_t i = 0;
    while (i < sizeof tests / sizeof tests[0] && strcmp(t, tests[i].name) != 0) ++i;
    if (i == sizeof tests / sizeof tests[0]) FAIL("unknown suite '%s' in '%s'", t, full);
    const double t0 = MMPI_Wtime();
    tests[i].fn();
    CASE("final barrier");
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
    long long all_checks = 0;
    CHECK_MPI(MMPI_Reduce(&checks, &all_checks, 1, MPI_LONG_LONG, MPI_SUM, 0, MMPI_COMM_WORLD));
    /* The world reduce completes at world rank 0 only when every
     * communicator of the variant is done: then it reports. */
    if (world_rank == 0)
      printf("PASS %s%s (%d+%d ranks, %lld checks, %.1f s)\n", tests[i].name, at ? at : "", nlow,
             size - nlow, all_checks, MMPI_Wtime() - t0);
    fflush(stdout);
    ++ran;
  }
  if (!ran) FAIL("no suite in '%s'", full);
  itest_comm_done(fail_setup);
  CHECK_MPI(MMPI_Op_free(&ops[O_USER_NC]));
  CHECK_MPI(MMPI_Op_free(&ops[O_USER_C]));
  CHECK_MPI(MPI_Type_free(&affine_type));
  CHECK_MPI(MMPI_Finalize());
  return 0;
}
