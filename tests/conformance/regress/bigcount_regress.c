/* Messages of 2 GiB and more across the clusters, unmodified MPI
 * through libmmpi_transparent; rank 0 sends to the last rank (the other
 * cluster). Every byte is checked against value = pattern(offset in the
 * message), in place: no second copy of the data.
 * usage: bigcount_regress TEST; prints "PASS TEST ..." when every check holds.
 *   contig       2 GiB + 5 KiB contiguous (count of a 1 KiB type); Probe and
 *                Recv statuses: Get_count(MPI_BYTE) and Get_elements give
 *                MPI_UNDEFINED, Get_elements_x and Get_count(1 KiB type) the sizes
 *   vector_send  one element of more than 2 GiB with gaps (a vector) sent,
 *                received contiguous (packed in pieces on the sender)
 *   vector_recv  contiguous sent, received as one element of more than 2 GiB
 *                with gaps (unpacked in pieces); the gaps stay untouched
 *   bcast        MPI_Bcast of 2 GiB + 5 KiB (count of a 1 KiB type) from rank 0
 *                to every rank, every byte checked
 *   gatherv      MPI_Gatherv to rank 0, then MPI_Scatterv of the same blocks
 *                back: the other cluster's blocks total 2 GiB + some KiB (one
 *                block at 1+1, about 1 GiB per rank at 1+2, so that a cluster
 *                aggregates 2 GiB from ranks below it)
 *   allgatherv   MPI_Allgatherv: the last rank's block is 2 GiB + 4 KiB
 *   alltoallw    MPI_Alltoallw, then MPI_Ialltoallw (swapping back), with
 *                MPI_IN_PLACE, a block of 2 GiB + 4 KiB each way; MPI_Ialltoallv whose
 *                displacement times extent passes 2 GiB (int elements)
 *   gather       MPI_Gather, then MPI_Scatter back, 1 GiB + 2 MiB of MPI_BYTE
 *                per rank, to rank 0 and to the last rank, then MPI_Igather
 *                and MPI_Iscatter to the last rank: at 1+2 the 2-rank
 *                cluster's blocks are more than INT_MAX elements together
 *   alltoall     MPI_Alltoall and MPI_Ialltoall, 1 GiB + 2 MiB per pair: ranks
 *                x count passes INT_MAX elements (1+1)
 *   allgather    MPI_Allgather and MPI_Iallgather in place, 1 GiB + 2 MiB per
 *                rank (at 1+2 the far cluster's blocks pass INT_MAX too)
 *   reduce_scatter  MPI_Reduce_scatter_block and MPI_Ireduce_scatter (uneven
 *                blocks) in place, MPI_BXOR on MPI_BYTE / MPI_UINT8_T, 2^31 +
 *                2^22 bytes in all: every word of each rank's block checked
 *                against the XOR of all inputs; then MPI_Ireduce of 640 MiB + 8
 *                bytes to the last rank (3 slices of 256 MiB), checked the same way
 *   reduce_scatter_v  MPI_Reduce_scatter (uneven blocks) and
 *                MPI_Ireduce_scatter_block, checked alike (not in CI: time)
 *   rma          one-sided, rank 0 to the last rank's window of 2 GiB + 12 KiB:
 *                MPI_Put of 2 GiB + 4 KiB (count of a 4 KiB type) at
 *                displacement 4 KiB, MPI_Rget of it back; libmmpi splits each
 *                into requests of 1 GiB. The window's first and last 4 KiB stay 0.
 *   rma_acc      rma, then MPI_Accumulate (MPI_SUM, MPI_INT) of the same data
 *                once more, every word checked at the target (not in CI: time)
 *   rma_vector   one-sided with a non-contiguous target datatype: MPI_Put of
 *                2 GiB + 2 KiB from a contiguous buffer into 1 KiB blocks 2 KiB
 *                apart (a vector spanning 4 GiB + 3 KiB) of the last rank's
 *                window, then MPI_Get of it back; every block and every gap
 *                and the window's first and last 4 KiB checked at the target
 *   rma_pieces   1 GiB + 4 KiB of int from a non-contiguous origin buffer
 *                (1 KiB blocks 2 KiB apart: packed, then split into 1 GiB
 *                requests) into the last rank's window: MPI_Rput, then
 *                MPI_Raccumulate (MPI_SUM), then MPI_Get_accumulate (MPI_SUM)
 *                whose result (the put + accumulate state) and the window's
 *                final state are checked word by word
 *   scan         MPI_Scan and MPI_Exscan in place, MPI_BXOR on MPI_BYTE, the
 *                ranks after rank 0 holding 2^31 + 2^22 bytes together; meant
 *                for 1+k under MMPI_SCAN_ALGORITHM=runs (1+8 in CI)
 * Peak memory: about 4.5 GB per rank (buffer + packed copy), 2 to 9 ranks
 * (each test's job peak: tests/conformance/CMakeLists.txt);
 * rma_vector about 8 GB at the target (its 4 GiB window and the requests). */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errors;

#define CHECK(cond, ...)                                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      ++errors;                                                    \
      fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond); \
      fprintf(stderr, __VA_ARGS__);                                \
      fprintf(stderr, "\n");                                       \
    }                                                              \
  } while (0)

/* Byte `o` of the message: every byte of o's low 40 bits counts, so a chunk
 * delivered at another offset (by a multiple of 2^k too) shows. */
static inline unsigned char pattern(uint64_t o) {
  return (unsigned char)((o ^ (o >> 8) ^ (o >> 16) ^ (o >> 24) ^ (o >> 32)) * 157u + 11u);
}

#define BLOCK 1000                  /* vector: bytes of data per block */
#define STRIDE 1024                 /* vector: bytes from block to block */
#define GAP 0xEE                    /* vector: what the gaps hold (never sent, never written) */
static const int kBlocks = 2150000; /* 2,150,000,000 bytes of data > 2^31 */

static unsigned char* alloc(size_t n) {
  unsigned char* p = malloc(n);
  if (!p) {
    fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", rank, n);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

/* Zeroed memory; calloc gets large blocks as fresh zero pages, without the
 * memset pass over them. */
static unsigned char* alloc0(size_t n) {
  unsigned char* p = calloc(n, 1);
  if (!p) {
    fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", rank, n);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

static void fill_stream(unsigned char* p, uint64_t n) {
  for (uint64_t o = 0; o < n; ++o) p[o] = pattern(o);
}

/* Checks n bytes against the pattern; reports the first 5 wrong bytes. */
static void check_stream(const unsigned char* p, uint64_t n, const char* what) {
  uint64_t bad = 0;
  for (uint64_t o = 0; o < n; ++o)
    if (p[o] != pattern(o) && bad++ < 5)
      CHECK(0, "%s: byte %llu is %u, expected %u", what, (unsigned long long)o, p[o], pattern(o));
  CHECK(bad == 0, "%s: %llu wrong bytes of %llu", what, (unsigned long long)bad,
        (unsigned long long)n);
}

/* A status of `bytes` bytes received as `count` elements of `type`. */
static void check_status(const MPI_Status* st, MPI_Datatype type, int count, MPI_Count bytes,
                         const char* what) {
  int n = 0;
  MPI_Count x = 0;
  MPI_Get_count(st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "%s: Get_count(MPI_BYTE) %d, expected MPI_UNDEFINED", what, n);
  MPI_Get_elements(st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "%s: Get_elements(MPI_BYTE) %d, expected MPI_UNDEFINED", what, n);
  MPI_Get_elements_x(st, MPI_BYTE, &x);
  CHECK(x == bytes, "%s: Get_elements_x(MPI_BYTE) %lld, expected %lld", what, (long long)x,
        (long long)bytes);
  MPI_Get_count(st, type, &n);
  CHECK(n == count, "%s: Get_count(type) %d, expected %d", what, n, count);
  MPI_Get_elements_x(st, type, &x);
  CHECK(x == bytes, "%s: Get_elements_x(type) %lld, expected %lld (MPI_BYTE elements)", what,
        (long long)x, (long long)bytes);
}

/* Rank 0 prints how long a step took (fill, call and check), for the log. */
static void step_time(const char* what, double since) {
  if (rank == 0) printf("  %s: %.1f s\n", what, MPI_Wtime() - since);
}

static MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

static void contig(void) {
  const int peer = rank == 0 ? size - 1 : 0;
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  kib = committed(kib);
  const int count = (1 << 21) + 5;
  const MPI_Count bytes = (MPI_Count)count * 1024;
  unsigned char* buf = alloc((size_t)bytes);
  if (rank == 0) {
    fill_stream(buf, (uint64_t)bytes);
    MPI_Send(buf, count, kib, peer, 7, MPI_COMM_WORLD);
  } else if (rank == size - 1) {
    MPI_Status st;
    MPI_Probe(peer, 7, MPI_COMM_WORLD, &st);
    check_status(&st, kib, count, bytes, "contig Probe");
    memset(buf, 0, (size_t)bytes);
    MPI_Recv(buf, count, kib, peer, 7, MPI_COMM_WORLD, &st);
    check_status(&st, kib, count, bytes, "contig Recv");
    check_stream(buf, (uint64_t)bytes, "contig");
  }
  free(buf);
  MPI_Type_free(&kib);
}

static void bcast(void) {
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  kib = committed(kib);
  const int count = (1 << 21) + 5;
  const MPI_Count bytes = (MPI_Count)count * 1024;
  unsigned char* buf = alloc((size_t)bytes);
  if (rank == 0)
    fill_stream(buf, (uint64_t)bytes);
  else
    memset(buf, 0, (size_t)bytes);
  MPI_Bcast(buf, count, kib, 0, MPI_COMM_WORLD);
  if (rank != 0) check_stream(buf, (uint64_t)bytes, "bcast");
  free(buf);
  MPI_Type_free(&kib);
}

/* The vector: kBlocks blocks of BLOCK bytes, STRIDE apart, one element. */
static MPI_Datatype big_vector(void) {
  MPI_Datatype v;
  MPI_Type_vector(kBlocks, BLOCK, STRIDE, MPI_BYTE, &v);
  return committed(v);
}

static size_t vector_span(void) { return (size_t)(kBlocks - 1) * STRIDE + BLOCK; }

static void check_type_sizes(MPI_Datatype v) {
  MPI_Count sz = 0, lb = 0, ext = 0, tlb = 0, text = 0;
  int isz = 0;
  MPI_Type_size_x(v, &sz);
  MPI_Type_size(v, &isz);
  MPI_Type_get_extent_x(v, &lb, &ext);
  MPI_Type_get_true_extent_x(v, &tlb, &text);
  CHECK(sz == (MPI_Count)kBlocks * BLOCK, "Type_size_x %lld", (long long)sz);
  CHECK(isz == MPI_UNDEFINED, "Type_size %d, expected MPI_UNDEFINED", isz);
  CHECK(lb == 0 && ext == (MPI_Count)vector_span(), "Type_get_extent_x %lld %lld", (long long)lb,
        (long long)ext);
  CHECK(tlb == 0 && text == (MPI_Count)vector_span(), "Type_get_true_extent_x %lld %lld",
        (long long)tlb, (long long)text);
}

static void vector(int send_vector) {
  const int peer = rank == 0 ? size - 1 : 0;
  MPI_Datatype v = big_vector(), blk;
  MPI_Type_contiguous(BLOCK, MPI_BYTE, &blk);
  blk = committed(blk);
  check_type_sizes(v);
  const MPI_Count bytes = (MPI_Count)kBlocks * BLOCK;
  const int typed = rank == 0 ? send_vector : !send_vector; /* this rank uses the vector */
  const size_t n = typed ? vector_span() : (size_t)bytes;
  unsigned char* buf = alloc(n);
  if (rank == 0) {
    if (typed) {
      memset(buf, GAP, n);
      for (uint64_t b = 0; b < (uint64_t)kBlocks; ++b)
        for (int j = 0; j < BLOCK; ++j) buf[b * STRIDE + j] = pattern(b * BLOCK + j);
      MPI_Send(buf, 1, v, peer, 8, MPI_COMM_WORLD);
    } else {
      fill_stream(buf, (uint64_t)bytes);
      MPI_Send(buf, kBlocks, blk, peer, 8, MPI_COMM_WORLD);
    }
  } else if (rank == size - 1) {
    MPI_Status st;
    memset(buf, GAP, n);
    if (typed) {
      MPI_Recv(buf, 1, v, peer, 8, MPI_COMM_WORLD, &st);
      check_status(&st, v, 1, bytes, "vector_recv");
      uint64_t bad = 0;
      for (uint64_t b = 0; b < (uint64_t)kBlocks; ++b)
        for (int j = 0; j < STRIDE && b * STRIDE + j < n; ++j) {
          const unsigned char want = j < BLOCK ? pattern(b * BLOCK + j) : GAP;
          if (buf[b * STRIDE + j] != want && bad++ < 5)
            CHECK(0, "vector_recv: byte %llu (block %llu) is %u, expected %u",
                  (unsigned long long)(b * STRIDE + j), (unsigned long long)b, buf[b * STRIDE + j],
                  want);
        }
      CHECK(bad == 0, "vector_recv: %llu wrong bytes", (unsigned long long)bad);
    } else {
      MPI_Recv(buf, kBlocks, blk, peer, 8, MPI_COMM_WORLD, &st);
      check_status(&st, blk, kBlocks, bytes, "vector_send");
      check_stream(buf, (uint64_t)bytes, "vector_send");
    }
  }
  free(buf);
  MPI_Type_free(&v);
  MPI_Type_free(&blk);
}

/* Rank r's block in the v-collectives: KiB elements; rank 0's is small, the
 * other cluster's (ranks 1..size-1) total 2 GiB + some KiB. */
static int vblock(int r) { return r == 0 ? 5 : (1 << 21) / (size - 1) + 3 + r; }

/* Word o/8 of rank r's block (8-byte words: cheap enough for 2 GiB twice a
 * second): the offset and the rank mixed by one multiply, so a chunk
 * delivered at another offset or from another rank shows. Blocks are whole
 * words, 8-byte aligned. */
static inline uint64_t vword(int r, uint64_t o) {
  return ((o >> 3) + ((uint64_t)r << 40) + 1) * 0x9E3779B97F4A7C15ull;
}

static void fill_block(unsigned char* p, int r, uint64_t n) {
  uint64_t* w = (uint64_t*)p;
  for (uint64_t o = 0; o < n; o += 8) w[o >> 3] = vword(r, o);
}

static void check_block(const unsigned char* p, int r, uint64_t n, const char* what) {
  const uint64_t* w = (const uint64_t*)p;
  uint64_t bad = 0;
  for (uint64_t o = 0; o < n; o += 8)
    if (w[o >> 3] != vword(r, o) && bad++ < 5)
      CHECK(0, "%s: rank %d's block: word at byte %llu is %llx, expected %llx", what, r,
            (unsigned long long)o, (unsigned long long)w[o >> 3], (unsigned long long)vword(r, o));
  CHECK(bad == 0, "%s: rank %d's block: %llu wrong words of %llu", what, r, (unsigned long long)bad,
        (unsigned long long)(n / 8));
}

/* Counts and displacements (KiB elements) of every rank's block, back to back. */
static MPI_Count vlayout(int* counts, int* displs) {
  MPI_Count at = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = vblock(r);
    displs[r] = (int)at;
    at += counts[r];
  }
  return at * 1024;
}

static void gatherv(void) {
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  kib = committed(kib);
  int* counts = calloc(size, sizeof(int));
  int* displs = calloc(size, sizeof(int));
  const MPI_Count total = vlayout(counts, displs);
  const uint64_t mine = (uint64_t)counts[rank] * 1024;
  unsigned char* block = alloc(mine);
  unsigned char* all = rank == 0 ? alloc0((size_t)total) : NULL;
  fill_block(block, rank, mine);
  MPI_Gatherv(block, counts[rank], kib, all, counts, displs, kib, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int r = 0; r < size; ++r)
      check_block(all + (size_t)displs[r] * 1024, r, (uint64_t)counts[r] * 1024, "gatherv");
  /* Back out: every rank gets its own block again. */
  memset(block, 0, mine);
  MPI_Scatterv(all, counts, displs, kib, block, counts[rank], kib, 0, MPI_COMM_WORLD);
  check_block(block, rank, mine, "scatterv");
  free(all);
  free(block);
  free(counts);
  free(displs);
  MPI_Type_free(&kib);
}

static void allgatherv(void) {
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  kib = committed(kib);
  int* counts = calloc(size, sizeof(int));
  int* displs = calloc(size, sizeof(int));
  /* Rank 0 and the last rank only: 2 GiB + 4 KiB from the last one. */
  for (int r = 0; r < size; ++r) counts[r] = r == 0 ? 5 : r == size - 1 ? (1 << 21) + 4 : 0;
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  const MPI_Count total = (MPI_Count)(displs[size - 1] + counts[size - 1]) * 1024;
  unsigned char* all = alloc0((size_t)total);
  /* In place on the last rank, from a send buffer on rank 0. */
  unsigned char* mine = rank == 0 ? alloc(5 * 1024) : NULL;
  if (rank == 0) fill_block(mine, 0, 5 * 1024);
  if (rank == size - 1)
    fill_block(all + (size_t)displs[rank] * 1024, rank, (uint64_t)counts[rank] * 1024);
  MPI_Allgatherv(rank == 0 ? (void*)mine : MPI_IN_PLACE, counts[rank], kib, all, counts, displs,
                 kib, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r)
    if (counts[r] > 0)
      check_block(all + (size_t)displs[r] * 1024, r, (uint64_t)counts[r] * 1024, "allgatherv");
  free(mine);
  free(all);
  free(counts);
  free(displs);
  MPI_Type_free(&kib);
}

/* Alltoallw with MPI_IN_PLACE between rank 0 and the last rank: each holds
 * its own block (4 KiB, stays) at 0 and the block for the other (2 GiB +
 * 4 KiB) at 4096; after MPI_Alltoallw that slot holds the other's block,
 * and MPI_Ialltoallw swaps them back (one fill for both calls). */
static void alltoallw_in_place(void) {
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  kib = committed(kib);
  const int peer = rank == 0 ? size - 1 : rank == size - 1 ? 0 : -1;
  const int big = (1 << 21) + 4;
  int* counts = calloc(size, sizeof(int));
  int* displs = calloc(size, sizeof(int));
  MPI_Datatype* types = malloc(size * sizeof(MPI_Datatype));
  for (int r = 0; r < size; ++r) types[r] = kib;
  const size_t n = peer >= 0 ? 4096 + (size_t)big * 1024 : 0;
  unsigned char* buf = peer >= 0 ? alloc(n) : NULL;
  if (peer >= 0) {
    counts[rank] = 4;
    counts[peer] = big;
    displs[peer] = 4096;
    fill_block(buf, rank + 8, 4096); /* own block: 8 + rank, never sent */
    fill_block(buf + 4096, rank, (uint64_t)big * 1024);
  }
  MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, MPI_COMM_WORLD);
  if (peer >= 0) {
    check_block(buf, rank + 8, 4096, "Alltoallw in place");
    check_block(buf + 4096, peer, (uint64_t)big * 1024, "Alltoallw in place");
  }
  MPI_Request req;
  MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (peer >= 0) {
    check_block(buf, rank + 8, 4096, "Ialltoallw in place");
    check_block(buf + 4096, rank, (uint64_t)big * 1024, "Ialltoallw in place");
  }
  free(buf);
  free(types);
  free(counts);
  free(displs);
  MPI_Type_free(&kib);
}

/* MPI_Ialltoallv of MPI_INT whose receive displacement (elements, an int) is
 * past 2 GiB in bytes: 1 MiB from the other rank lands at 2 GiB + 1 MiB.
 * The buffer is mostly never touched (no memory). */
static void ialltoallv_far_displacement(void) {
  const int peer = rank == 0 ? size - 1 : rank == size - 1 ? 0 : -1;
  const int n = 1 << 18;                 /* ints: 1 MiB */
  const int far = (1 << 29) + (1 << 18); /* ints: 2 GiB + 1 MiB */
  int* sc = calloc(size, sizeof(int));
  int* sd = calloc(size, sizeof(int));
  int* rc = calloc(size, sizeof(int));
  int* rd = calloc(size, sizeof(int));
  int* out = malloc((size_t)n * sizeof(int));
  int* in = peer >= 0 ? malloc(((size_t)far + n) * sizeof(int)) : NULL;
  if (peer >= 0) {
    if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 3);
    sc[peer] = rc[peer] = n;
    rd[peer] = far;
    fill_block((unsigned char*)out, rank, (uint64_t)n * sizeof(int));
    memset(in + far, 0, (size_t)n * sizeof(int));
  }
  MPI_Request req;
  MPI_Ialltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (peer >= 0)
    check_block((unsigned char*)(in + far), peer, (uint64_t)n * sizeof(int),
                "Ialltoallv far displacement");
  free(in);
  free(out);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

/* Bytes per rank's block in the uniform collectives: two blocks pass
 * INT_MAX elements of MPI_BYTE (2^31 + 2^22). */
#define UBLOCK ((1 << 30) + (2 << 20))

/* Gather and Scatter of uniform blocks whose sum passes INT_MAX elements: to
 * rank 0 (alone in its cluster at 1+2), then to the last rank (its cluster's
 * blocks pass 2 GiB: Open MPI's native gather and scatter inside the root's
 * cluster, with displacements past 2 GiB from 1+3 on), blocking, then
 * non-blocking (Igather, Iscatter). Block ids: 16 * round + rank. */
static void gather(void) {
  const int count = UBLOCK;
  unsigned char* block = alloc((size_t)count);
  for (int round = 0; round < 3; ++round) {
    const int root = round == 0 ? 0 : size - 1, nb = round == 2;
    /* Fresh zero pages at the root only, given back after each round. */
    unsigned char* all = rank == root ? alloc0((size_t)count * size) : NULL;
    const char* g = nb ? "Igather" : "Gather";
    const char* sc = nb ? "Iscatter" : "Scatter";
    const double t0 = MPI_Wtime();
    fill_block(block, 16 * round + rank, (uint64_t)count);
    MPI_Request req;
    if (nb) {
      MPI_Igather(block, count, MPI_BYTE, all, count, MPI_BYTE, root, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Gather(block, count, MPI_BYTE, all, count, MPI_BYTE, root, MPI_COMM_WORLD);
    }
    if (rank == root)
      for (int r = 0; r < size; ++r)
        check_block(all + (size_t)r * count, 16 * round + r, (uint64_t)count, g);
    memset(block, 0, (size_t)count);
    if (nb) {
      MPI_Iscatter(all, count, MPI_BYTE, block, count, MPI_BYTE, root, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Scatter(all, count, MPI_BYTE, block, count, MPI_BYTE, root, MPI_COMM_WORLD);
    }
    /* block was zeroed: the check sees what the scatter delivered. */
    check_block(block, 16 * round + rank, (uint64_t)count, sc);
    free(all);
    step_time(round == 0 ? "Gather + Scatter, root 0"
              : nb       ? "Igather + Iscatter, root last"
                         : "Gather + Scatter, root last",
              t0);
  }
  free(block);
}

/* Alltoall and Ialltoall of UBLOCK bytes per pair: ranks x count passes
 * INT_MAX elements. Rank r's block for rank d has id 64 * r + d (+ 32 for
 * the non-blocking call). */
static void alltoall(void) {
  const int count = UBLOCK;
  const size_t n = (size_t)count * size;
  unsigned char* out = alloc(n);
  unsigned char* in = alloc0(n);
  for (int nb = 0; nb < 2; ++nb) {
    const char* what = nb ? "Ialltoall" : "Alltoall";
    const double t0 = MPI_Wtime();
    for (int d = 0; d < size; ++d)
      fill_block(out + (size_t)d * count, 64 * rank + d + 32 * nb, (uint64_t)count);
    if (nb) {
      memset(in, 0, n);
      MPI_Request req;
      MPI_Ialltoall(out, count, MPI_BYTE, in, count, MPI_BYTE, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Alltoall(out, count, MPI_BYTE, in, count, MPI_BYTE, MPI_COMM_WORLD);
    }
    for (int s = 0; s < size; ++s)
      check_block(in + (size_t)s * count, 64 * s + rank + 32 * nb, (uint64_t)count, what);
    step_time(what, t0);
  }
  free(out);
  free(in);
}

/* Allgather and Iallgather in place, UBLOCK bytes per rank: ranks x count
 * passes INT_MAX elements (and at 1+2 the other cluster's blocks do too).
 * Block ids: 16 * call + rank. */
static void allgather(void) {
  const int count = UBLOCK;
  const size_t n = (size_t)count * size;
  unsigned char* all = alloc0(n);
  for (int nb = 0; nb < 2; ++nb) {
    const char* what = nb ? "Iallgather" : "Allgather";
    const double t0 = MPI_Wtime();
    if (nb) memset(all, 0, n);
    fill_block(all + (size_t)rank * count, 16 * nb + rank, (uint64_t)count);
    if (nb) {
      MPI_Request req;
      MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_BYTE, MPI_COMM_WORLD,
                     &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_BYTE, MPI_COMM_WORLD);
    }
    for (int r = 0; r < size; ++r)
      check_block(all + (size_t)r * count, 16 * nb + r, (uint64_t)count, what);
    step_time(what, t0);
  }
  free(all);
}

/* Word at byte o of the reduced vector: the XOR of every rank's word there. */
static uint64_t xor_word(int call, uint64_t o) {
  uint64_t w = 0;
  for (int r = 0; r < size; ++r) w ^= vword(16 * call + r, o);
  return w;
}

/* Reductions to blocks in place, MPI_BXOR of bytes (MPI_BYTE, MPI_UINT8_T),
 * 2^31 + 2^22 bytes in all (past INT_MAX elements); rank r's input word at
 * byte o is vword(16 * call + r, o), and its block of the result is checked
 * word by word against xor_word. Calls first..last of: 0 Reduce_scatter_block,
 * 1 Ireduce_scatter, 2 Reduce_scatter, 3 Ireduce_scatter_block; 1 and 2 have
 * uneven blocks (the last rank's largest). */
static void reduce_scatter(int first, int last) {
  const uint64_t per = (((1ull << 31) + (1ull << 22)) / (uint64_t)size + 7) & ~7ull;
  const uint64_t total = per * (uint64_t)size;
  int* counts = calloc(size, sizeof(int));
  unsigned char* buf = alloc((size_t)total);
  for (int call = first; call <= last; ++call) {
    static const char* const names[] = {"Reduce_scatter_block", "Ireduce_scatter", "Reduce_scatter",
                                        "Ireduce_scatter_block"};
    const char* what = names[call];
    const int uneven = call == 1 || call == 2;
    for (int r = 0; r < size; ++r)
      counts[r] = (int)per + (uneven ? (r == size - 1 ? 8 * 4096 * (size - 1) : -8 * 4096) : 0);
    uint64_t offset = 0;
    for (int r = 0; r < rank; ++r) offset += (uint64_t)counts[r];
    const double t0 = MPI_Wtime();
    fill_block(buf, 16 * call + rank, total);
    MPI_Request req = MPI_REQUEST_NULL;
    if (call == 0)
      MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, (int)per, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
    else if (call == 1)
      MPI_Ireduce_scatter(MPI_IN_PLACE, buf, counts, MPI_UINT8_T, MPI_BXOR, MPI_COMM_WORLD, &req);
    else if (call == 2)
      MPI_Reduce_scatter(MPI_IN_PLACE, buf, counts, MPI_UINT8_T, MPI_BXOR, MPI_COMM_WORLD);
    else
      MPI_Ireduce_scatter_block(MPI_IN_PLACE, buf, (int)per, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD,
                                &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    const uint64_t* w = (const uint64_t*)buf;
    uint64_t bad = 0;
    for (uint64_t o = 0; o < (uint64_t)counts[rank]; o += 8)
      if (w[o >> 3] != xor_word(call, offset + o) && bad++ < 5)
        CHECK(0, "%s: word at byte %llu of rank %d's block is %llx, expected %llx", what,
              (unsigned long long)o, rank, (unsigned long long)w[o >> 3],
              (unsigned long long)xor_word(call, offset + o));
    CHECK(bad == 0, "%s: %llu wrong words of %d bytes", what, (unsigned long long)bad,
          counts[rank]);
    step_time(what, t0);
  }
  if (first == 0) {
    /* nbc_reduce_binomial's slices sent on to a root other than rank 0:
     * MPI_Ireduce of 640 MiB + 8 bytes (3 slices of at most 256 MiB) to the
     * last rank, into the second GiB of buf. */
    const uint64_t n = (640ull << 20) + 8, into = 1ull << 30;
    const int root = size - 1;
    const double t0 = MPI_Wtime();
    fill_block(buf, 16 * 4 + rank, n);
    if (rank == root) memset(buf + into, 0, (size_t)n);
    MPI_Request req;
    MPI_Ireduce(buf, rank == root ? buf + into : NULL, (int)n, MPI_BYTE, MPI_BXOR, root,
                MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    const uint64_t* w = (const uint64_t*)(buf + into);
    uint64_t bad = 0;
    for (uint64_t o = 0; rank == root && o < n; o += 8)
      if (w[o >> 3] != xor_word(4, o) && bad++ < 5)
        CHECK(0, "Ireduce: word at byte %llu is %llx, expected %llx", (unsigned long long)o,
              (unsigned long long)w[o >> 3], (unsigned long long)xor_word(4, o));
    CHECK(bad == 0, "Ireduce: %llu wrong words", (unsigned long long)bad);
    step_time("Ireduce to the last rank", t0);
  }
  free(buf);
  free(counts);
}

/* Scan and Exscan in place, MPI_BXOR of MPI_BYTE, with a count such that
 * the ranks after rank 0 together pass INT_MAX elements (2^31 + 2^22 bytes):
 * at 1+k under MMPI_SCAN_ALGORITHM=runs the second cluster's leader gathers
 * and scatters them natively (collectives/scan_runs.cpp). Rank r's input
 * word at byte o is vword(16 * call + r, o); its result is the XOR over the
 * ranks before it (and itself, for Scan), checked word by word. */
static void scan(void) {
  const uint64_t count = (((1ull << 31) + (1ull << 22)) / (uint64_t)(size - 1) + 7) & ~7ull;
  unsigned char* buf = alloc((size_t)count);
  for (int call = 0; call < 2; ++call) {
    const char* what = call ? "Exscan" : "Scan";
    const double t0 = MPI_Wtime();
    fill_block(buf, 16 * call + rank, count);
    if (call)
      MPI_Exscan(MPI_IN_PLACE, buf, (int)count, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
    else
      MPI_Scan(MPI_IN_PLACE, buf, (int)count, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
    const int upto = call ? rank - 1 : rank; /* last rank in the prefix */
    const uint64_t* w = (const uint64_t*)buf;
    uint64_t bad = 0;
    for (uint64_t o = 0; upto >= 0 && o < count; o += 8) {
      uint64_t want = 0;
      for (int r = 0; r <= upto; ++r) want ^= vword(16 * call + r, o);
      if (w[o >> 3] != want && bad++ < 5)
        CHECK(0, "%s: word at byte %llu is %llx, expected %llx", what, (unsigned long long)o,
              (unsigned long long)w[o >> 3], (unsigned long long)want);
    }
    CHECK(bad == 0, "%s: %llu wrong words of %llu bytes", what, (unsigned long long)bad,
          (unsigned long long)count);
    step_time(what, t0);
  }
  free(buf);
}

/* 4-byte word i of the pattern stream, doubled (what MPI_SUM of the stream
 * onto itself leaves, as unsigned: wraps like the target's int). */
static uint32_t doubled_word(uint64_t i) {
  uint32_t w = 0;
  unsigned char b[4];
  for (int k = 0; k < 4; ++k) b[k] = pattern(4 * i + (uint64_t)k);
  memcpy(&w, b, 4);
  return 2u * w;
}

static void rma(int accumulate) {
  const int target = size - 1;
  MPI_Datatype page, ipage;
  MPI_Type_contiguous(4096, MPI_BYTE, &page);
  MPI_Type_contiguous(1024, MPI_INT, &ipage);
  page = committed(page);
  ipage = committed(ipage);
  const int count = (1 << 19) + 1;
  const uint64_t bytes = (uint64_t)count * 4096, wsize = bytes + 3 * 4096;
  unsigned char* mem = NULL;
  if (rank == target) mem = alloc0(wsize);
  MPI_Win win;
  MPI_Win_create(mem, rank == target ? (MPI_Aint)wsize : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  unsigned char* buf = NULL;
  if (rank == 0) {
    buf = alloc(bytes);
    fill_stream(buf, bytes);
    /* The lock is lazy: it rides on the first of the Put's requests. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    int rc = MPI_Put(buf, count, page, target, 4096, count, page, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Put of %llu bytes: error %d", (unsigned long long)bytes, rc);
    MPI_Win_unlock(target, win);
    memset(buf, 0, bytes);
    MPI_Request req;
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    rc = MPI_Rget(buf, count, page, target, 4096, count, page, win, &req);
    CHECK(rc == MPI_SUCCESS, "MPI_Rget: error %d", rc);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_stream(buf, bytes, "rma Rget");
    MPI_Win_unlock(target, win);
    if (accumulate) {
      MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
      rc = MPI_Accumulate(buf, count, ipage, target, 4096, count, ipage, MPI_SUM, win);
      CHECK(rc == MPI_SUCCESS, "MPI_Accumulate: error %d", rc);
      MPI_Win_unlock(target, win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target) {
    uint64_t bad = 0;
    for (uint64_t o = 0; o < 4096; ++o) bad += mem[o] != 0 || mem[4096 + bytes + o] != 0;
    CHECK(bad == 0, "rma: %llu bytes outside the target range changed", (unsigned long long)bad);
    bad = 0;
    for (uint64_t i = 0; accumulate && i < bytes / 4; ++i) {
      uint32_t w;
      memcpy(&w, mem + 4096 + 4 * i, 4);
      if (w != doubled_word(i) && bad++ < 5)
        CHECK(0, "rma: word %llu is %u, expected %u", (unsigned long long)i, w, doubled_word(i));
    }
    CHECK(bad == 0, "rma: %llu wrong words of %llu after Put + Accumulate", (unsigned long long)bad,
          (unsigned long long)(bytes / 4));
  }
  MPI_Win_free(&win);
  free(mem);
  free(buf);
  MPI_Type_free(&page);
  MPI_Type_free(&ipage);
}

/* 1 KiB blocks of data 2 KiB apart: the target of rma_vector, the origin of
 * rma_pieces. */
#define RBLOCK 1024
#define RSTRIDE 2048

/* Put and Get through a target vector of 2 GiB + 2 KiB spanning 4 GiB + 3 KiB. */
static void rma_vector(void) {
  const int target = size - 1;
  const int n = (1 << 21) + 2; /* blocks */
  const uint64_t bytes = (uint64_t)n * RBLOCK;
  const uint64_t span = (uint64_t)(n - 1) * RSTRIDE + RBLOCK, wsize = span + 2 * 4096;
  MPI_Datatype vec, kib;
  MPI_Type_vector(n, RBLOCK, RSTRIDE, MPI_BYTE, &vec);
  MPI_Type_contiguous(RBLOCK, MPI_BYTE, &kib);
  vec = committed(vec);
  kib = committed(kib);
  unsigned char* mem = NULL;
  if (rank == target) mem = alloc0(wsize);
  MPI_Win win;
  MPI_Win_create(mem, rank == target ? (MPI_Aint)wsize : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  unsigned char* buf = NULL;
  if (rank == 0) {
    buf = alloc(bytes);
    fill_stream(buf, bytes);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    int rc = MPI_Put(buf, n, kib, target, 4096, 1, vec, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Put of %llu bytes into a vector: error %d",
          (unsigned long long)bytes, rc);
    rc = MPI_Win_unlock(target, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_unlock after the Put: error %d", rc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target) {
    uint64_t bad = 0, gaps = 0;
    for (uint64_t o = 0; o < 4096; ++o) gaps += mem[o] != 0 || mem[4096 + span + o] != 0;
    for (uint64_t k = 0; k < (uint64_t)n; ++k) {
      const unsigned char* b = mem + 4096 + k * RSTRIDE;
      for (uint64_t j = 0; j < RBLOCK; ++j)
        if (b[j] != pattern(k * RBLOCK + j) && bad++ < 5)
          CHECK(0, "rma_vector: block %llu byte %llu is %u, expected %u", (unsigned long long)k,
                (unsigned long long)j, b[j], pattern(k * RBLOCK + j));
      for (uint64_t j = RBLOCK; k + 1 < (uint64_t)n && j < RSTRIDE; ++j) gaps += b[j] != 0;
    }
    CHECK(bad == 0, "rma_vector: %llu wrong bytes of %llu after the Put", (unsigned long long)bad,
          (unsigned long long)bytes);
    CHECK(gaps == 0, "rma_vector: %llu bytes of the gaps or edges changed",
          (unsigned long long)gaps);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    memset(buf, 0, bytes);
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    int rc = MPI_Get(buf, n, kib, target, 4096, 1, vec, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Get through a vector: error %d", rc);
    rc = MPI_Win_unlock(target, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_unlock after the Get: error %d", rc);
    check_stream(buf, bytes, "rma_vector Get");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  free(mem);
  free(buf);
  MPI_Type_free(&vec);
  MPI_Type_free(&kib);
}

/* 4-byte word i of the pattern stream times k (wraps like the target's int). */
static uint32_t word_times(uint64_t i, uint32_t k) {
  uint32_t w = 0;
  unsigned char b[4];
  for (int j = 0; j < 4; ++j) b[j] = pattern(4 * i + (uint64_t)j);
  memcpy(&w, b, 4);
  return k * w;
}

/* Rput, Raccumulate and Get_accumulate of 1 GiB + 4 KiB from a non-contiguous
 * origin buffer. */
static void rma_pieces(void) {
  const int target = size - 1;
  const int n = (1 << 20) + 4; /* blocks of 1 KiB */
  const uint64_t bytes = (uint64_t)n * RBLOCK, words = bytes / 4;
  const uint64_t span = (uint64_t)(n - 1) * RSTRIDE + RBLOCK, wsize = bytes + 2 * 4096;
  MPI_Datatype ovec;
  MPI_Type_vector(n, RBLOCK / 4, RSTRIDE / 4, MPI_INT, &ovec);
  ovec = committed(ovec);
  unsigned char* mem = NULL;
  if (rank == target) mem = alloc0(wsize);
  MPI_Win win;
  MPI_Win_create(mem, rank == target ? (MPI_Aint)wsize : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  unsigned char *obuf = NULL, *res = NULL;
  if (rank == 0) {
    obuf = alloc(span);
    memset(obuf, GAP, span);
    for (uint64_t k = 0; k < (uint64_t)n; ++k)
      for (uint64_t j = 0; j < RBLOCK; ++j) obuf[k * RSTRIDE + j] = pattern(k * RBLOCK + j);
    MPI_Request req;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    int rc = MPI_Rput(obuf, 1, ovec, target, 4096, (int)words, MPI_INT, win, &req);
    CHECK(rc == MPI_SUCCESS, "MPI_Rput from a vector: error %d", rc);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "MPI_Wait(Rput): error %d", rc);
    rc = MPI_Raccumulate(obuf, 1, ovec, target, 4096, (int)words, MPI_INT, MPI_SUM, win, &req);
    CHECK(rc == MPI_SUCCESS, "MPI_Raccumulate from a vector: error %d", rc);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "MPI_Wait(Raccumulate): error %d", rc);
    res = alloc0(bytes);
    rc = MPI_Get_accumulate(obuf, 1, ovec, res, (int)words, MPI_INT, target, 4096, (int)words,
                            MPI_INT, MPI_SUM, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Get_accumulate from a vector: error %d", rc);
    rc = MPI_Win_unlock(target, win);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_unlock: error %d", rc);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < words; ++i) {
      uint32_t w;
      memcpy(&w, res + 4 * i, 4);
      if (w != word_times(i, 2) && bad++ < 5)
        CHECK(0, "rma_pieces: fetched word %llu is %u, expected %u", (unsigned long long)i, w,
              word_times(i, 2));
    }
    CHECK(bad == 0, "rma_pieces: %llu wrong words of %llu fetched by Get_accumulate",
          (unsigned long long)bad, (unsigned long long)words);
    bad = 0;
    for (uint64_t k = 0; k + 1 < (uint64_t)n; ++k)
      for (uint64_t j = RBLOCK; j < RSTRIDE; ++j) bad += obuf[k * RSTRIDE + j] != GAP;
    CHECK(bad == 0, "rma_pieces: %llu gap bytes of the origin changed", (unsigned long long)bad);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target) {
    uint64_t bad = 0, edges = 0;
    for (uint64_t o = 0; o < 4096; ++o) edges += mem[o] != 0 || mem[4096 + bytes + o] != 0;
    for (uint64_t i = 0; i < words; ++i) {
      uint32_t w;
      memcpy(&w, mem + 4096 + 4 * i, 4);
      if (w != word_times(i, 3) && bad++ < 5)
        CHECK(0, "rma_pieces: window word %llu is %u, expected %u", (unsigned long long)i, w,
              word_times(i, 3));
    }
    CHECK(bad == 0, "rma_pieces: %llu wrong words of %llu in the window", (unsigned long long)bad,
          (unsigned long long)words);
    CHECK(edges == 0, "rma_pieces: %llu bytes outside the target range changed",
          (unsigned long long)edges);
  }
  MPI_Win_free(&win);
  free(mem);
  free(obuf);
  free(res);
  MPI_Type_free(&ovec);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TEST\n", argv[0]);
    return 2;
  }
  const char* t = argv[1];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* One rank per world means the layer is missing: nothing would cross. */
  CHECK(size >= 2, "MPI_COMM_WORLD has %d rank(s); run it across the clusters", size);
  const double t0 = MPI_Wtime();
  if (!strcmp(t, "contig"))
    contig();
  else if (!strcmp(t, "vector_send"))
    vector(1);
  else if (!strcmp(t, "vector_recv"))
    vector(0);
  else if (!strcmp(t, "bcast"))
    bcast();
  else if (!strcmp(t, "gatherv"))
    gatherv();
  else if (!strcmp(t, "gather"))
    gather();
  else if (!strcmp(t, "alltoall"))
    alltoall();
  else if (!strcmp(t, "allgather"))
    allgather();
  else if (!strcmp(t, "reduce_scatter"))
    reduce_scatter(0, 1);
  else if (!strcmp(t, "scan"))
    scan();
  else if (!strcmp(t, "reduce_scatter_v"))
    reduce_scatter(2, 3);
  else if (!strcmp(t, "allgatherv"))
    allgatherv();
  else if (!strcmp(t, "rma"))
    rma(0);
  else if (!strcmp(t, "rma_acc"))
    rma(1);
  else if (!strcmp(t, "rma_vector"))
    rma_vector();
  else if (!strcmp(t, "rma_pieces"))
    rma_pieces();
  else if (!strcmp(t, "alltoallw")) {
    alltoallw_in_place();
    ialltoallv_far_displacement();
  } else {
    fprintf(stderr, "unknown test %s\n", t);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int all = 0;
  MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0) printf("PASS %s (%.1f s)\n", t, MPI_Wtime() - t0);
  if (rank == 0 && all != 0) printf("FAIL %s: %d errors\n", t, all);
  MPI_Finalize();
  return all != 0;
}
