/* Integration test of a job over three sites or more (zipper-run --local
 * --sites, docs/sites.md). Usage: mmpi_sites_itest p2p|coll.
 *
 * p2p: every rank exchanges a message of every size with every other rank
 *   (so every pair of sites, both ways at once), every byte checked with its
 *   status (source, tag, count); then rank 0 receives from all others with
 *   MPI_ANY_SOURCE and tells the senders apart by the status.
 * coll: allreduce (int sum, double max, a non-commutative user operation),
 *   bcast from every root (eager and rendezvous sizes) and alltoall, each
 *   checked against a reference computed here, on MMPI_COMM_WORLD (over all
 *   sites: the schedules), on a communicator over two of the sites (the
 *   two-level algorithms inside a job of more sites) and on one over all
 *   sites with the ranks reversed; then barrier, reduce and allgather.
 *
 * The site table comes from MMPI_SITES, which must name three sites or more:
 * a run of fewer fails instead of passing. Exit 0 and "PASS TEST (N ranks, S
 * sites)" on world rank 0 when every rank passed. */
#include <mmpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int world_rank, world_size, nsites;
static int site_first[65]; /* world rank of each site's first; [nsites] = world size */

#define FAIL(...)                                                            \
  do {                                                                       \
    fprintf(stderr, "FAIL rank %d %s:%d: ", world_rank, __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                                            \
    fprintf(stderr, "\n");                                                   \
    MMPI_Abort(MMPI_COMM_WORLD, 1);                                          \
  } while (0)

#define CHECK_MPI(call)                                         \
  do {                                                          \
    int rc_ = (call);                                           \
    if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_); \
  } while (0)

static int site_of(int w) {
  int s = 0;
  while (s + 1 < nsites && w >= site_first[s + 1]) ++s;
  return s;
}

static unsigned char pattern(uint64_t seed, size_t i) {
  return (unsigned char)((seed * 2654435761u + i * 7u + (i >> 8) * 13u + (i >> 16)) & 0xff);
}
static void fill(unsigned char* b, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) b[i] = pattern(seed, i);
}
static void verify(const unsigned char* b, size_t n, uint64_t seed, const char* what, int from) {
  for (size_t i = 0; i < n; ++i)
    if (b[i] != pattern(seed, i))
      FAIL("%s from rank %d (site %d) to rank %d (site %d): byte %zu of %zu is %u, expected %u",
           what, from, site_of(from), world_rank, site_of(world_rank), i, n, b[i],
           pattern(seed, i));
}
static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) FAIL("out of memory for %zu bytes", n);
  return p;
}

/* Eager, the eager limit and past it (the rendezvous), several chunks. */
static const size_t kSizes[] = {0, 1, 4099, 16384, 16385, 300007};
#define NSIZES (sizeof kSizes / sizeof kSizes[0])

static uint64_t seed_of(int src, int dst, size_t s) {
  return ((uint64_t)src * 1000 + (uint64_t)dst) * 16 + s;
}

static void test_p2p(void) {
  const int peers = world_size - 1;
  const size_t n_msgs = (size_t)peers * NSIZES;
  unsigned char** out = xmalloc(n_msgs * sizeof *out);
  unsigned char** in = xmalloc(n_msgs * sizeof *in);
  MPI_Request* req = xmalloc(2 * n_msgs * sizeof *req);
  MPI_Status* st = xmalloc(2 * n_msgs * sizeof *st);
  size_t k = 0;
  /* Every receive first, then every send: both directions of every pair at once. */
  for (int p = 0; p < world_size; ++p) {
    if (p == world_rank) continue;
    for (size_t s = 0; s < NSIZES; ++s, ++k) {
      in[k] = xmalloc(kSizes[s]);
      memset(in[k], 0xEE, kSizes[s]);
      CHECK_MPI(MMPI_Irecv(in[k], (int)kSizes[s], MPI_BYTE, p, (int)s, MMPI_COMM_WORLD, &req[k]));
    }
  }
  k = 0;
  for (int p = 0; p < world_size; ++p) {
    if (p == world_rank) continue;
    for (size_t s = 0; s < NSIZES; ++s, ++k) {
      out[k] = xmalloc(kSizes[s]);
      fill(out[k], kSizes[s], seed_of(world_rank, p, s));
      CHECK_MPI(MMPI_Isend(out[k], (int)kSizes[s], MPI_BYTE, p, (int)s, MMPI_COMM_WORLD,
                           &req[n_msgs + k]));
    }
  }
  CHECK_MPI(MMPI_Waitall((int)(2 * n_msgs), req, st));
  k = 0;
  for (int p = 0; p < world_size; ++p) {
    if (p == world_rank) continue;
    for (size_t s = 0; s < NSIZES; ++s, ++k) {
      int count = -1;
      MMPI_Get_count(&st[k], MPI_BYTE, &count);
      if (st[k].MPI_SOURCE != p || st[k].MPI_TAG != (int)s || count != (int)kSizes[s])
        FAIL("status from rank %d size %zu: source %d tag %d count %d", p, kSizes[s],
             st[k].MPI_SOURCE, st[k].MPI_TAG, count);
      verify(in[k], kSizes[s], seed_of(p, world_rank, s), "message", p);
      free(in[k]);
      free(out[k]);
    }
  }
  free(out);
  free(in);
  free(req);
  free(st);

  /* Any source: rank 0 takes one message from every other rank in
   * whatever order they arrive; the status says whose it is. */
  const size_t n = 20000; /* past the eager limit */
  unsigned char* buf = xmalloc(n);
  if (world_rank == 0) {
    char* seen = calloc((size_t)world_size, 1);
    for (int i = 1; i < world_size; ++i) {
      MPI_Status s;
      memset(buf, 0, n);
      CHECK_MPI(MMPI_Recv(buf, (int)n, MPI_BYTE, MPI_ANY_SOURCE, 77, MMPI_COMM_WORLD, &s));
      if (s.MPI_SOURCE <= 0 || s.MPI_SOURCE >= world_size || seen[s.MPI_SOURCE])
        FAIL("any-source receive: unexpected source %d", s.MPI_SOURCE);
      seen[s.MPI_SOURCE] = 1;
      verify(buf, n, seed_of(s.MPI_SOURCE, 0, 99), "any-source message", s.MPI_SOURCE);
    }
    free(seen);
  } else {
    fill(buf, n, seed_of(world_rank, 0, 99));
    CHECK_MPI(MMPI_Send(buf, (int)n, MPI_BYTE, 0, 77, MMPI_COMM_WORLD));
  }
  free(buf);
}

/* Affine maps f(v) = a v + b mod 2^32 under composition: associative, not
 * commutative, so a reduction must combine in rank order. */
typedef struct {
  unsigned a, b;
} affine;
static void affine_compose(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const affine* f = in;
  affine* g = inout;
  for (int i = 0; i < *len; ++i) {
    const affine r = {f[i].a * g[i].a, f[i].a * g[i].b + f[i].b};
    g[i] = r;
  }
}
static affine affine_of(int member, int i) {
  const affine f = {(unsigned)(member * 7 + i * 3) * 2u + 1u, (unsigned)(member * 1000 + i)};
  return f;
}

static MPI_Datatype affine_type;
static MPI_Op affine_op;

/* The collectives on `comm` (members: world ranks `world_of[r]`), checked
 * against references computed from what each member contributes. */
static void check_collectives(MPI_Comm comm, const char* name) {
  int rank = 0, size = 0;
  CHECK_MPI(MMPI_Comm_rank(comm, &rank));
  CHECK_MPI(MMPI_Comm_size(comm, &size));
  int* world_of = xmalloc((size_t)size * sizeof *world_of);
  CHECK_MPI(MMPI_Allgather(&world_rank, 1, MPI_INT, world_of, 1, MPI_INT, comm));
  for (int r = 0; r < size; ++r)
    if ((r == rank) != (world_of[r] == world_rank))
      FAIL("%s: allgather: member %d says world rank %d", name, r, world_of[r]);

  /* Allreduce: int sum, double max, the non-commutative composition. */
  enum { kCount = 1000 };
  int* isum = xmalloc(kCount * sizeof *isum);
  int* iin = xmalloc(kCount * sizeof *iin);
  for (int i = 0; i < kCount; ++i) iin[i] = world_of[rank] * 31 + i;
  CHECK_MPI(MMPI_Allreduce(iin, isum, kCount, MPI_INT, MPI_SUM, comm));
  for (int i = 0; i < kCount; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += world_of[r] * 31 + i;
    if (isum[i] != want) FAIL("%s: allreduce sum[%d] = %d, expected %d", name, i, isum[i], want);
  }
  double* dmax = xmalloc(kCount * sizeof *dmax);
  double* din = xmalloc(kCount * sizeof *din);
  for (int i = 0; i < kCount; ++i) din[i] = (double)((world_of[rank] * 7919 + i * 104729) % 1013);
  CHECK_MPI(MMPI_Allreduce(din, dmax, kCount, MPI_DOUBLE, MPI_MAX, comm));
  for (int i = 0; i < kCount; ++i) {
    double want = -1;
    for (int r = 0; r < size; ++r) {
      const double v = (double)((world_of[r] * 7919 + i * 104729) % 1013);
      if (v > want) want = v;
    }
    if (dmax[i] != want) FAIL("%s: allreduce max[%d] = %g, expected %g", name, i, dmax[i], want);
  }
  affine fin[3], fout[3];
  for (int i = 0; i < 3; ++i) fin[i] = affine_of(rank, i);
  CHECK_MPI(MMPI_Allreduce(fin, fout, 3, affine_type, affine_op, comm));
  for (int i = 0; i < 3; ++i) {
    affine want = affine_of(0, i);
    for (int r = 1; r < size; ++r) {
      /* want (op) next, rank order: want after next. */
      const affine x = affine_of(r, i);
      const affine c = {want.a * x.a, want.a * x.b + want.b};
      want = c;
    }
    if (fout[i].a != want.a || fout[i].b != want.b)
      FAIL("%s: non-commutative allreduce [%d] = (%u, %u), expected (%u, %u)", name, i, fout[i].a,
           fout[i].b, want.a, want.b);
  }

  /* Bcast from every root, eager and rendezvous. */
  static const size_t kBcast[] = {13, 70001};
  for (int root = 0; root < size; ++root)
    for (size_t b = 0; b < 2; ++b) {
      unsigned char* buf = xmalloc(kBcast[b]);
      if (rank == root)
        fill(buf, kBcast[b], seed_of(world_of[root], 500, b));
      else
        memset(buf, 0xEE, kBcast[b]);
      CHECK_MPI(MMPI_Bcast(buf, (int)kBcast[b], MPI_BYTE, root, comm));
      verify(buf, kBcast[b], seed_of(world_of[root], 500, b), "bcast", world_of[root]);
      free(buf);
    }

  /* Alltoall: block r of member s is pattern (s, r). */
  const size_t blk = 5003;
  unsigned char* aout = xmalloc(blk * (size_t)size);
  unsigned char* ain = xmalloc(blk * (size_t)size);
  for (int r = 0; r < size; ++r)
    fill(aout + blk * (size_t)r, blk, seed_of(world_of[rank], world_of[r], 600));
  memset(ain, 0xEE, blk * (size_t)size);
  CHECK_MPI(MMPI_Alltoall(aout, (int)blk, MPI_BYTE, ain, (int)blk, MPI_BYTE, comm));
  for (int r = 0; r < size; ++r)
    verify(ain + blk * (size_t)r, blk, seed_of(world_of[r], world_of[rank], 600), "alltoall",
           world_of[r]);

  /* Barrier, reduce to the last member, allgather of one int each. */
  CHECK_MPI(MMPI_Barrier(comm));
  int total = -1, one = world_of[rank] + 1;
  CHECK_MPI(MMPI_Reduce(&one, &total, 1, MPI_INT, MPI_SUM, size - 1, comm));
  if (rank == size - 1) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += world_of[r] + 1;
    if (total != want) FAIL("%s: reduce = %d, expected %d", name, total, want);
  }
  free(world_of);
  free(isum);
  free(iin);
  free(dmax);
  free(din);
  free(aout);
  free(ain);
}

static void test_coll(void) {
  CHECK_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type));
  CHECK_MPI(MPI_Type_commit(&affine_type));
  CHECK_MPI(MMPI_Op_create(affine_compose, 0, &affine_op));
  check_collectives(MMPI_COMM_WORLD, "world");
  /* Two of the sites (the first and the last): the two-level algorithms in
   * a job of more sites. The middle sites' ranks get MPI_COMM_NULL. */
  const int s = site_of(world_rank);
  MPI_Comm two = MPI_COMM_NULL;
  CHECK_MPI(MMPI_Comm_split(MMPI_COMM_WORLD, s == 0 || s == nsites - 1 ? 0 : MPI_UNDEFINED,
                            world_rank, &two));
  if (two != MPI_COMM_NULL) {
    check_collectives(two, "first and last site");
    CHECK_MPI(MMPI_Comm_free(&two));
  }
  /* All sites, ranks reversed: every site's members are no longer first. */
  MPI_Comm reversed = MPI_COMM_NULL;
  CHECK_MPI(MMPI_Comm_split(MMPI_COMM_WORLD, 0, world_size - world_rank, &reversed));
  check_collectives(reversed, "reversed");
  CHECK_MPI(MMPI_Comm_free(&reversed));
  CHECK_MPI(MMPI_Op_free(&affine_op));
  CHECK_MPI(MPI_Type_free(&affine_type));
}

/* The site table from MMPI_SITES ("4,4,2"): at least three sites. */
static void read_sites(void) {
  const char* v = getenv("MMPI_SITES");
  if (!v) FAIL("MMPI_SITES is not set: run under zipper-run --sites with three sites or more");
  int total = 0;
  for (const char* p = v; *p && nsites < 64; ++nsites) {
    char* end = NULL;
    const long n = strtol(p, &end, 10);
    if (end == p || n < 1) FAIL("MMPI_SITES='%s' is not a list of rank counts", v);
    site_first[nsites] = total;
    total += (int)n;
    p = *end == ',' ? end + 1 : end;
  }
  site_first[nsites] = total;
  if (nsites < 3) FAIL("MMPI_SITES='%s' names %d sites; this test needs three or more", v, nsites);
  if (total != world_size)
    FAIL("MMPI_SITES='%s' holds %d ranks, the world %d", v, total, world_size);
}

int main(int argc, char** argv) {
  CHECK_MPI(MMPI_Init(&argc, &argv));
  CHECK_MPI(MMPI_Comm_rank(MMPI_COMM_WORLD, &world_rank));
  CHECK_MPI(MMPI_Comm_size(MMPI_COMM_WORLD, &world_size));
  read_sites();
  const char* which = argc > 1 ? argv[1] : "";
  if (strcmp(which, "p2p") == 0)
    test_p2p();
  else if (strcmp(which, "coll") == 0)
    test_coll();
  else
    FAIL("usage: mmpi_sites_itest p2p|coll (got '%s')", which);
  /* Every rank passed its checks: one agreement over all sites, then PASS. */
  int ok = 1, all = 0;
  CHECK_MPI(MMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MMPI_COMM_WORLD));
  if (all != world_size) FAIL("only %d of %d ranks passed", all, world_size);
  if (world_rank == 0) printf("PASS %s (%d ranks, %d sites)\n", which, world_size, nsites);
  CHECK_MPI(MMPI_Finalize());
  return 0;
}
