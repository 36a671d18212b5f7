/* Communication patterns whose matrix (zipper-run --profile) profile_itest.py
 * knows exactly, and a program whose results must not depend on where its
 * ranks run (zipper-run --rank-map). Every received byte is checked; each
 * pattern ends with "PASS PATTERN" on rank 0.
 *
 *   mmpi_profile_itest ring      3 rounds of MMPI_Sendrecv: rank r sends
 *                                (r+1) * 8192 bytes to r+1 (mod n)
 *   mmpi_profile_itest halo      2-D 5-point halo on a 2 x n/2 grid numbered
 *                                row-major (n even), 2 steps, non-periodic:
 *                                800 bytes east/west, 1600 bytes north/south
 *   mmpi_profile_itest alltoall  one MMPI_Alltoallv: r sends (r+1)(d+1)*16
 *                                ints to d
 *   mmpi_profile_itest colls     MMPI_Bcast of 40000 bytes from rank 0, then
 *                                MMPI_Allreduce (sum) of 1000 doubles
 *   mmpi_profile_itest results   point-to-point, wildcard receives, every kind
 *                                of collective, a split and a non-commutative
 *                                reduction; prints "RESULT rank R: DIGEST" per
 *                                rank and "WHERE rank R: GROUP" (MMPI_GROUP)
 * Nothing but the pattern communicates between MMPI_Init and MMPI_Finalize.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "itest_check.h"

static unsigned char pattern_byte(int src, int dst, int round, long i) {
  return (unsigned char)(src * 31 + dst * 7 + round * 13 + i);
}

static void fill(unsigned char* b, long n, int src, int dst, int round) {
  for (long i = 0; i < n; ++i) b[i] = pattern_byte(src, dst, round, i);
}

static void check(const unsigned char* b, long n, int src, int dst, int round) {
  for (long i = 0; i < n; ++i)
    if (b[i] != pattern_byte(src, dst, round, i))
      FAIL("byte %ld from rank %d (round %d) is %d, expected %d", i, src, round, b[i],
           pattern_byte(src, dst, round, i));
}

static void ring(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const long out = (long)(rank + 1) * 8192, in = (long)(left + 1) * 8192;
  unsigned char* s = malloc((size_t)out);
  unsigned char* r = malloc((size_t)in);
  for (int round = 0; round < 3; ++round) {
    CASE("ring round %d", round);
    fill(s, out, rank, right, round);
    CHECK_MPI(MMPI_Sendrecv(s, (int)out, MPI_BYTE, right, round, r, (int)in, MPI_BYTE, left, round,
                            MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check(r, in, left, rank, round);
  }
  free(s);
  free(r);
}

static void halo(void) {
  if (size % 2) FAIL("halo needs an even number of ranks, not %d", size);
  const int cols = size / 2, row = rank / cols, col = rank % cols;
  /* east, west, north, south; -1 at the border */
  const int peer[4] = {col + 1 < cols ? rank + 1 : -1, col > 0 ? rank - 1 : -1,
                       row > 0 ? rank - cols : -1, row < 1 ? rank + cols : -1};
  const long bytes[4] = {800, 800, 1600, 1600};
  unsigned char out[4][1600], in[4][1600];
  for (int step = 0; step < 2; ++step) {
    CASE("halo step %d", step);
    MPI_Request req[8];
    int nreq = 0;
    for (int d = 0; d < 4; ++d) {
      if (peer[d] < 0) continue;
      CHECK_MPI(
          MMPI_Irecv(in[d], (int)bytes[d], MPI_BYTE, peer[d], step, MMPI_COMM_WORLD, &req[nreq++]));
      fill(out[d], bytes[d], rank, peer[d], step);
      CHECK_MPI(MMPI_Isend(out[d], (int)bytes[d], MPI_BYTE, peer[d], step, MMPI_COMM_WORLD,
                           &req[nreq++]));
    }
    CHECK_MPI(MMPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
    for (int d = 0; d < 4; ++d)
      if (peer[d] >= 0) check(in[d], bytes[d], peer[d], rank, step);
  }
}

static void alltoall(void) {
  CASE("alltoallv");
  int* sc = malloc(sizeof(int) * (size_t)size);
  int* sd = malloc(sizeof(int) * (size_t)size);
  int* rc = malloc(sizeof(int) * (size_t)size);
  int* rd = malloc(sizeof(int) * (size_t)size);
  int stotal = 0, rtotal = 0;
  for (int d = 0; d < size; ++d) {
    sc[d] = (rank + 1) * (d + 1) * 16;
    rc[d] = (d + 1) * (rank + 1) * 16;
    sd[d] = stotal;
    rd[d] = rtotal;
    stotal += sc[d];
    rtotal += rc[d];
  }
  int* s = malloc(sizeof(int) * (size_t)stotal);
  int* r = malloc(sizeof(int) * (size_t)rtotal);
  for (int d = 0; d < size; ++d)
    for (int i = 0; i < sc[d]; ++i) s[sd[d] + i] = rank * 1000003 + d * 1009 + i;
  CHECK_MPI(MMPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MMPI_COMM_WORLD));
  for (int f = 0; f < size; ++f)
    for (int i = 0; i < rc[f]; ++i)
      EXPECT(r[rd[f] + i] == f * 1000003 + rank * 1009 + i, "element %d from rank %d is %d", i, f,
             r[rd[f] + i]);
  free(s);
  free(r);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void colls(void) {
  CASE("bcast");
  static unsigned char b[40000];
  if (rank == 0) fill(b, sizeof b, 0, 0, 0);
  CHECK_MPI(MMPI_Bcast(b, sizeof b, MPI_BYTE, 0, MMPI_COMM_WORLD));
  check(b, sizeof b, 0, 0, 0);
  CASE("allreduce");
  static double in[1000], out[1000];
  for (int i = 0; i < 1000; ++i) in[i] = rank * 1000 + i; /* exact in double */
  CHECK_MPI(MMPI_Allreduce(in, out, 1000, MPI_DOUBLE, MPI_SUM, MMPI_COMM_WORLD));
  for (int i = 0; i < 1000; ++i)
    EXPECT(out[i] == 1000.0 * size * (size - 1) / 2 + (double)size * i, "sum %d is %g", i, out[i]);
}

/* ---- results: the same digest wherever the ranks run --------------------- */

static uint64_t digest = 1469598103934665603ull; /* FNV-1a */

static void mix(const void* p, size_t n) {
  const unsigned char* b = p;
  for (size_t i = 0; i < n; ++i) digest = (digest ^ b[i]) * 1099511628211ull;
}

/* 2 x 2 integer matrices mod 2^32 under multiplication: associative, not
 * commutative, so MMPI_Reduce must combine in rank order. */
static void matmul(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  uint32_t* a = in;
  uint32_t* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    const uint32_t c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                           a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

static void results(void) {
  int v[64], w[64];
  /* Point-to-point around the ring, both ways. */
  CASE("results ring");
  for (int i = 0; i < 64; ++i) v[i] = rank * 100 + i;
  CHECK_MPI(MMPI_Sendrecv(v, 64, MPI_INT, (rank + 1) % size, 1, w, 64, MPI_INT,
                          (rank + size - 1) % size, 1, MMPI_COMM_WORLD, MPI_STATUS_IGNORE));
  mix(w, sizeof w);
  /* Wildcard receives at rank 0: who sent what, whatever the order. */
  CASE("results anysource");
  if (rank == 0) {
    int got[1024] = {0};
    for (int k = 1; k < size && k < 1024; ++k) {
      int x;
      MPI_Status st;
      CHECK_MPI(MMPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MMPI_COMM_WORLD, &st));
      EXPECT(x == st.MPI_SOURCE * 11, "rank %d sent %d", st.MPI_SOURCE, x);
      got[st.MPI_SOURCE] = x;
    }
    mix(got, sizeof(int) * (size_t)size);
  } else {
    int x = rank * 11;
    CHECK_MPI(MMPI_Send(&x, 1, MPI_INT, 0, 7, MMPI_COMM_WORLD));
  }
  /* Collectives with rank-dependent inputs and roots. */
  CASE("results collectives");
  CHECK_MPI(MMPI_Allreduce(v, w, 64, MPI_INT, MPI_SUM, MMPI_COMM_WORLD));
  mix(w, sizeof w);
  int x = rank * rank + 3, y = 0;
  CHECK_MPI(MMPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MMPI_COMM_WORLD));
  mix(&y, sizeof y);
  CHECK_MPI(MMPI_Exscan(&x, &y, 1, MPI_INT, MPI_MAX, MMPI_COMM_WORLD));
  if (rank > 0) mix(&y, sizeof y);
  int root_val = rank == size - 1 ? 4242 : 0;
  CHECK_MPI(MMPI_Bcast(&root_val, 1, MPI_INT, size - 1, MMPI_COMM_WORLD));
  mix(&root_val, sizeof root_val);
  int* all = malloc(sizeof(int) * (size_t)size);
  CHECK_MPI(MMPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MMPI_COMM_WORLD));
  mix(all, sizeof(int) * (size_t)size);
  CHECK_MPI(MMPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, size > 1 ? 1 : 0, MMPI_COMM_WORLD));
  if (rank == (size > 1 ? 1 : 0)) mix(all, sizeof(int) * (size_t)size);
  for (int d = 0; d < size; ++d) all[d] = rank * 1000 + d;
  int* back = malloc(sizeof(int) * (size_t)size);
  CHECK_MPI(MMPI_Alltoall(all, 1, MPI_INT, back, 1, MPI_INT, MMPI_COMM_WORLD));
  mix(back, sizeof(int) * (size_t)size);
  free(all);
  free(back);
  /* A non-commutative reduction: rank order decides the product. */
  CASE("results non-commutative reduce");
  MPI_Datatype mat;
  MPI_Op op;
  CHECK_MPI(MMPI_Type_contiguous(4, MPI_UINT32_T, &mat));
  CHECK_MPI(MMPI_Type_commit(&mat));
  CHECK_MPI(MMPI_Op_create(matmul, 0, &op));
  uint32_t m[4] = {1u + (uint32_t)rank, 2u, 3u * (uint32_t)rank, 5u}, p[4] = {0, 0, 0, 0};
  CHECK_MPI(MMPI_Reduce(m, p, 1, mat, op, 0, MMPI_COMM_WORLD));
  if (rank == 0) mix(p, sizeof p);
  CHECK_MPI(MMPI_Op_free(&op));
  CHECK_MPI(MMPI_Type_free(&mat));
  /* A split by colour with reversed keys, and a collective inside it. */
  CASE("results split");
  MPI_Comm sub;
  CHECK_MPI(MMPI_Comm_split(MMPI_COMM_WORLD, rank % 3, -rank, &sub));
  int sr, ss, sum = 0;
  CHECK_MPI(MMPI_Comm_rank(sub, &sr));
  CHECK_MPI(MMPI_Comm_size(sub, &ss));
  CHECK_MPI(MMPI_Allreduce(&sr, &sum, 1, MPI_INT, MPI_SUM, sub));
  int part[3] = {sr, ss, sum};
  mix(part, sizeof part);
  CHECK_MPI(MMPI_Comm_free(&sub));
  printf("RESULT rank %d: %016llx\n", rank, (unsigned long long)digest);
  const char* group = getenv("MMPI_GROUP");
  printf("WHERE rank %d: %s\n", rank, group ? group : "none");
  fflush(stdout);
}

int main(int argc, char** argv) {
  CHECK_MPI(MMPI_Init(&argc, &argv));
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  (void)nlow; /* itest_check.h's; these patterns do not depend on the layout */
  const char* what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "ring") == 0)
    ring();
  else if (strcmp(what, "halo") == 0)
    halo();
  else if (strcmp(what, "alltoall") == 0)
    alltoall();
  else if (strcmp(what, "colls") == 0)
    colls();
  else if (strcmp(what, "results") == 0)
    results();
  else
    FAIL("usage: mmpi_profile_itest ring|halo|alltoall|colls|results");
  CHECK_MPI(MMPI_Finalize());
  if (rank == 0) {
    printf("PASS %s\n", what);
    fflush(stdout);
  }
  return 0;
}
