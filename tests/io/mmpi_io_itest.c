/* MPI-IO across two clusters (docs/io.md): run by zipper-run.
 * Usage: mmpi_io_itest TEST DIR   (TEST: access, shared, consistency,
 * atomic, notshared, all; DIR: a directory both clusters see).
 * Every byte read is checked against what its writer wrote; "PASS TEST" on
 * rank 0 when every rank passed. notshared: cluster B's ranks bind another
 * directory over DIR in a mount namespace of their own, so the clusters see
 * different files under one path; every rank must get MPI_ERR_NO_SUCH_FILE
 * from MPI_File_open and the program then exits 3 (the job fails). */
#define _GNU_SOURCE
#include <errno.h>
#include <mmpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, size, low; /* low: this rank is in cluster A */
static const char* dir;

#define FAIL(...)                                                      \
  do {                                                                 \
    fprintf(stderr, "FAIL rank %d %s:%d: ", rank, __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                                      \
    fprintf(stderr, "\n");                                             \
    MMPI_Abort(MMPI_COMM_WORLD, 1);                                    \
  } while (0)

#define CHECK_MPI(call)                                         \
  do {                                                          \
    int rc_ = (call);                                           \
    if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_); \
  } while (0)

static unsigned char pattern(uint64_t seed, size_t i) {
  return (unsigned char)((seed * 131u + i * 7u + (i >> 8) + (i >> 16) + 1) & 0xff);
}
static void fill(unsigned char* b, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) b[i] = pattern(seed, i);
}
static void verify(const unsigned char* b, size_t n, uint64_t seed, const char* what) {
  for (size_t i = 0; i < n; ++i)
    if (b[i] != pattern(seed, i))
      FAIL("%s: byte %zu is %u, expected %u", what, i, b[i], pattern(seed, i));
}

static void path_of(char* out, size_t n, const char* name) { snprintf(out, n, "%s/%s", dir, name); }

static MPI_File open_file(const char* name, int amode) {
  char p[4096];
  path_of(p, sizeof p, name);
  if (rank == 0) MMPI_File_delete(p, MPI_INFO_NULL); /* from an earlier run; may not exist */
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  MPI_File fh = MPI_FILE_NULL;
  CHECK_MPI(MMPI_File_open(MMPI_COMM_WORLD, p, amode, MPI_INFO_NULL, &fh));
  return fh;
}

/* Explicit offsets, individual pointers, views, non-blocking, split
 * collectives and the file's metadata, across both clusters. */
static void test_access(void) {
  enum { BLOCK = 1 << 20 };
  unsigned char* mine = malloc(BLOCK);
  unsigned char* got = malloc(BLOCK);
  MPI_File fh = open_file("access.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);

  int amode = 0;
  CHECK_MPI(MMPI_File_get_amode(fh, &amode));
  if (amode != (MPI_MODE_CREATE | MPI_MODE_RDWR)) FAIL("get_amode gave %d", amode);
  MPI_Group g;
  int gsize = 0;
  CHECK_MPI(MMPI_File_get_group(fh, &g));
  CHECK_MPI(MMPI_Group_size(g, &gsize));
  if (gsize != size) FAIL("file group has %d ranks, expected %d", gsize, size);
  MMPI_Group_free(&g);

  /* 1. write_at_all of contiguous blocks; each rank reads the next rank's. */
  fill(mine, BLOCK, 100 + rank);
  MPI_Status st;
  CHECK_MPI(MMPI_File_write_at_all(fh, (MPI_Offset)rank * BLOCK, mine, BLOCK, MPI_BYTE, &st));
  int count = 0;
  MMPI_Get_count(&st, MPI_BYTE, &count);
  if (count != BLOCK) FAIL("write_at_all status counts %d bytes", count);
  CHECK_MPI(MMPI_File_sync(fh));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_File_sync(fh));
  const int next = (rank + 1) % size;
  CHECK_MPI(MMPI_File_read_at(fh, (MPI_Offset)next * BLOCK, got, BLOCK, MPI_BYTE, &st));
  verify(got, BLOCK, 100 + next, "read_at of the next rank's block");
  MPI_Offset fsize = 0;
  CHECK_MPI(MMPI_File_get_size(fh, &fsize));
  if (fsize != (MPI_Offset)size * BLOCK) FAIL("get_size %lld", (long long)fsize);
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD)); /* all sized it before anyone writes on */

  /* 2. A strided view: rank r owns ints r, r+size, r+2*size, ... */
  enum { INTS = 4096 };
  MPI_Datatype vec, filetype;
  CHECK_MPI(MMPI_Type_vector(1, 1, size, MPI_INT, &vec));
  CHECK_MPI(MMPI_Type_create_resized(vec, 0, (MPI_Aint)size * sizeof(int), &filetype));
  CHECK_MPI(MMPI_Type_commit(&filetype));
  const MPI_Offset base = (MPI_Offset)size * BLOCK;
  CHECK_MPI(MMPI_File_set_view(fh, base + (MPI_Offset)rank * sizeof(int), MPI_INT, filetype,
                               "native", MPI_INFO_NULL));
  MPI_Aint extent = 0;
  CHECK_MPI(MMPI_File_get_type_extent(fh, MPI_INT, &extent));
  if (extent != sizeof(int)) FAIL("get_type_extent %ld", (long)extent);
  int* ints = malloc(INTS * sizeof(int));
  for (int i = 0; i < INTS; ++i) ints[i] = (i * size + rank) ^ 0x5a5a;
  /* Half with write_all, half with the split collective, through the pointer. */
  CHECK_MPI(MMPI_File_write_all(fh, ints, INTS / 2, MPI_INT, &st));
  CHECK_MPI(MMPI_File_write_all_begin(fh, ints + INTS / 2, INTS / 2, MPI_INT));
  CHECK_MPI(MMPI_File_write_all_end(fh, ints + INTS / 2, &st));
  MPI_Offset pos = 0, byte = 0;
  CHECK_MPI(MMPI_File_get_position(fh, &pos));
  if (pos != INTS) FAIL("get_position %lld after %d ints", (long long)pos, INTS);
  CHECK_MPI(MMPI_File_get_byte_offset(fh, 1, &byte));
  if (byte != base + (MPI_Offset)(size + rank) * (MPI_Offset)sizeof(int))
    FAIL("get_byte_offset %lld", (long long)byte);
  CHECK_MPI(MMPI_File_sync(fh));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_File_sync(fh));
  /* Everyone reads the whole interleaved region back through a byte view. */
  CHECK_MPI(MMPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  int* all = malloc((size_t)INTS * size * sizeof(int));
  MPI_Request rq;
  CHECK_MPI(MMPI_File_iread_at(fh, base, all, INTS * size, MPI_INT, &rq));
  CHECK_MPI(MMPI_Wait(&rq, &st));
  MMPI_Get_count(&st, MPI_INT, &count);
  if (count != INTS * size) FAIL("iread_at read %d ints", count);
  for (int i = 0; i < INTS * size; ++i)
    if (all[i] != (i ^ 0x5a5a)) FAIL("interleaved int %d is %d", i, all[i]);

  /* 3. Non-blocking collective and individual: iwrite_at_all, iread_all. */
  fill(mine, BLOCK, 300 + rank);
  MPI_Request two[2];
  CHECK_MPI(MMPI_File_iwrite_at_all(fh, (MPI_Offset)rank * BLOCK, mine, BLOCK, MPI_BYTE, &two[0]));
  CHECK_MPI(MMPI_Waitall(1, two, MPI_STATUSES_IGNORE));
  CHECK_MPI(MMPI_File_sync(fh));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_File_sync(fh));
  CHECK_MPI(MMPI_File_seek(fh, (MPI_Offset)next * BLOCK, MPI_SEEK_SET));
  CHECK_MPI(MMPI_File_iread_all(fh, got, BLOCK, MPI_BYTE, &two[0]));
  int flag = 0;
  while (!flag) CHECK_MPI(MMPI_Test(&two[0], &flag, &st));
  verify(got, BLOCK, 300 + next, "iread_all of the next rank's block");
  CHECK_MPI(MMPI_File_read_at_all_begin(fh, (MPI_Offset)next * BLOCK, got, BLOCK, MPI_BYTE));
  CHECK_MPI(MMPI_File_read_at_all_end(fh, got, &st));
  verify(got, BLOCK, 300 + next, "read_at_all_begin/end");

  /* 4. Size: set_size shrinks on both clusters, preallocate grows. */
  CHECK_MPI(MMPI_File_set_size(fh, BLOCK));
  CHECK_MPI(MMPI_File_get_size(fh, &fsize));
  if (fsize != BLOCK) FAIL("after set_size: %lld", (long long)fsize);
  CHECK_MPI(MMPI_File_preallocate(fh, 2 * BLOCK));
  CHECK_MPI(MMPI_File_get_size(fh, &fsize));
  if (fsize < 2 * BLOCK) FAIL("after preallocate: %lld", (long long)fsize);
  MPI_Info info;
  CHECK_MPI(MMPI_File_get_info(fh, &info));
  MMPI_Info_free(&info);
  CHECK_MPI(MMPI_File_close(&fh));
  if (fh != MPI_FILE_NULL) FAIL("close left the handle");

  /* 5. DELETE_ON_CLOSE: gone once both clusters closed it; EXCL on an existing file fails on all.
   */
  fh = open_file("scratch.dat",
                 MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE);
  CHECK_MPI(MMPI_File_write_at_all(fh, (MPI_Offset)rank * 64, mine, 64, MPI_BYTE, &st));
  CHECK_MPI(MMPI_File_close(&fh));
  char p[4096];
  path_of(p, sizeof p, "scratch.dat");
  struct stat sb;
  if (stat(p, &sb) == 0) FAIL("%s still exists after DELETE_ON_CLOSE", p);
  path_of(p, sizeof p, "access.dat");
  const int rc = MMPI_File_open(MMPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh);
  int cls = 0;
  MMPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_FILE_EXISTS) FAIL("EXCL on an existing file: class %d", cls);
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  if (rank == 0) CHECK_MPI(MMPI_File_delete(p, MPI_INFO_NULL));
  free(all);
  free(ints);
  MMPI_Type_free(&filetype);
  MMPI_Type_free(&vec);
  free(mine);
  free(got);
}

/* Shared file pointer and ordered access, rank order across both clusters. */
static void test_shared(void) {
  enum { REC = 32, K = 8 };
  MPI_File fh = open_file("shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
  CHECK_MPI(MMPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  unsigned char rec[REC];
  MPI_Status st;
  /* write_shared: K records per rank, anywhere, none lost or overlapping. */
  for (int k = 0; k < K; ++k) {
    memset(rec, 0, REC);
    snprintf((char*)rec, REC, "r%04d k%02d", rank, k);
    if (k % 2) {
      MPI_Request rq;
      CHECK_MPI(MMPI_File_iwrite_shared(fh, rec, REC, MPI_BYTE, &rq));
      CHECK_MPI(MMPI_Wait(&rq, &st));
    } else {
      CHECK_MPI(MMPI_File_write_shared(fh, rec, REC, MPI_BYTE, &st));
    }
  }
  CHECK_MPI(MMPI_File_sync(fh));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_File_sync(fh));
  MPI_Offset shared = 0;
  CHECK_MPI(MMPI_File_get_position_shared(fh, &shared));
  if (shared != (MPI_Offset)size * K * REC) FAIL("shared pointer at %lld", (long long)shared);
  const size_t total = (size_t)size * K * REC;
  unsigned char* all = malloc(total + REC);
  CHECK_MPI(MMPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, &st));
  int* seen = calloc((size_t)size * K, sizeof(int));
  for (size_t i = 0; i < total; i += REC) {
    int r = -1, k = -1;
    if (sscanf((char*)all + i, "r%d k%d", &r, &k) != 2 || r < 0 || r >= size || k < 0 || k >= K)
      FAIL("record at %zu unreadable", i);
    ++seen[r * K + k];
  }
  for (int i = 0; i < size * K; ++i)
    if (seen[i] != 1) FAIL("record of rank %d k %d seen %d times", i / K, i % K, seen[i]);

  /* write_ordered after seek_shared: rank r's 2 records at r*2 in rank order. */
  CHECK_MPI(MMPI_File_seek_shared(fh, (MPI_Offset)total, MPI_SEEK_SET));
  unsigned char two[2 * REC];
  memset(two, 0, sizeof two);
  snprintf((char*)two, REC, "o%04d a", rank);
  snprintf((char*)two + REC, REC, "o%04d b", rank);
  CHECK_MPI(MMPI_File_write_ordered(fh, two, 2 * REC, MPI_BYTE, &st));
  CHECK_MPI(MMPI_File_write_ordered_begin(fh, two, REC, MPI_BYTE));
  CHECK_MPI(MMPI_File_write_ordered_end(fh, two, &st));
  CHECK_MPI(MMPI_File_get_position_shared(fh, &shared));
  if (shared != (MPI_Offset)(total + (size_t)size * 3 * REC))
    FAIL("after ordered writes the shared pointer is at %lld", (long long)shared);
  CHECK_MPI(MMPI_File_sync(fh));
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_File_sync(fh));
  /* read_ordered from the start of the ordered part gives each rank its own. */
  CHECK_MPI(MMPI_File_seek_shared(fh, (MPI_Offset)total, MPI_SEEK_SET));
  unsigned char back[2 * REC];
  CHECK_MPI(MMPI_File_read_ordered(fh, back, 2 * REC, MPI_BYTE, &st));
  if (memcmp(back, two, 2 * REC) != 0) FAIL("read_ordered gave another rank's records");
  unsigned char* ord = malloc((size_t)size * 3 * REC);
  CHECK_MPI(MMPI_File_read_at(fh, (MPI_Offset)total, ord, size * 3 * REC, MPI_BYTE, &st));
  for (int r = 0; r < size; ++r) {
    char want[REC];
    snprintf(want, REC, "o%04d a", r);
    if (strcmp((char*)ord + (size_t)r * 2 * REC, want) != 0) FAIL("ordered record %d a", r);
    snprintf(want, REC, "o%04d b", r);
    if (strcmp((char*)ord + (size_t)r * 2 * REC + REC, want) != 0) FAIL("ordered record %d b", r);
    snprintf(want, REC, "o%04d a", r);
    if (strcmp((char*)ord + (size_t)size * 2 * REC + (size_t)r * REC, want) != 0)
      FAIL("split ordered record %d", r);
  }
  /* A new view resets the shared pointer to 0 (MPI-3.1 13.3). */
  CHECK_MPI(MMPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_MPI(MMPI_File_get_position_shared(fh, &shared));
  if (shared != 0) FAIL("set_view left the shared pointer at %lld", (long long)shared);
  CHECK_MPI(MMPI_File_close(&fh));
  free(ord);
  free(seen);
  free(all);
}

/* MPI-3.1 13.6.1: after sync-barrier-sync a rank of one cluster reads what
 * a rank of the other wrote, both ways, at many offsets. */
static void test_consistency(void) {
  enum { N = 64 * 1024, ROUNDS = 20 };
  MPI_File fh = open_file("consistency.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
  unsigned char* b = malloc(N);
  MPI_Status st;
  for (int round = 0; round < ROUNDS; ++round) {
    const int writer = round % 2 ? size - 1 : 0; /* A, then B */
    const int reader = round % 2 ? 0 : size - 1;
    const MPI_Offset off = (MPI_Offset)(round % 5) * (N / 3);
    if (rank == writer) {
      fill(b, N, 1000 + round);
      CHECK_MPI(MMPI_File_write_at(fh, off, b, N, MPI_BYTE, &st));
    }
    CHECK_MPI(MMPI_File_sync(fh));
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
    CHECK_MPI(MMPI_File_sync(fh));
    if (rank == reader) {
      memset(b, 0, N);
      CHECK_MPI(MMPI_File_read_at(fh, off, b, N, MPI_BYTE, &st));
      verify(b, N, 1000 + round, "read after sync-barrier-sync");
    }
    CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  }
  CHECK_MPI(MMPI_File_close(&fh));
  free(b);
}

/* Atomic mode: ranks of both clusters write one overlapping region over and
 * over, each a whole block of its own byte, independently and collectively;
 * every read sees one writer's block whole, never a mix (sequential
 * consistency of overlapping accesses, MPI-3.1 13.6.1). */
static void test_atomic(void) {
  enum { N = 256 * 1024, ROUNDS = 40 };
  MPI_File fh = open_file("atomic.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
  CHECK_MPI(MMPI_File_set_atomicity(fh, 1));
  int flag = 0;
  CHECK_MPI(MMPI_File_get_atomicity(fh, &flag));
  if (!flag) FAIL("get_atomicity 0 after set_atomicity 1");
  unsigned char* b = malloc(N);
  MPI_Status st;
  const int writer = rank == 0 || rank == size - 1; /* one in A, one in B */
  for (int round = 0; round < ROUNDS; ++round) {
    if (writer) {
      memset(b, 1 + rank % 250, N);
      CHECK_MPI(MMPI_File_write_at(fh, 0, b, N, MPI_BYTE, &st));
    } else {
      CHECK_MPI(MMPI_File_read_at(fh, 0, b, N, MPI_BYTE, &st));
      int got = 0;
      MMPI_Get_count(&st, MPI_BYTE, &got);
      for (int i = 1; i < got; ++i)
        if (b[i] != b[0]) FAIL("atomic read mixes writes: byte %d is %u, byte 0 %u", i, b[i], b[0]);
    }
    /* Collectively: every rank writes the whole region (overlapping). */
    memset(b, 1 + rank % 250, N);
    CHECK_MPI(MMPI_File_write_at_all(fh, 0, b, writer ? N : 0, MPI_BYTE, &st));
  }
  CHECK_MPI(MMPI_Barrier(MMPI_COMM_WORLD));
  CHECK_MPI(MMPI_File_read_at(fh, 0, b, N, MPI_BYTE, &st));
  for (int i = 1; i < N; ++i)
    if (b[i] != b[0]) FAIL("final region mixes writes at %d", i);
  if (b[0] != 1 && b[0] != 1 + (size - 1) % 250) FAIL("final region by no writer: %u", b[0]);
  CHECK_MPI(MMPI_File_close(&fh));
  free(b);
}

/* Cluster B sees another directory under DIR: the open must fail on every
 * rank, and nothing may be created on A's side. */
static int test_notshared(void) {
  char p[4096];
  if (!low) {
    char other[4096];
    snprintf(other, sizeof other, "%s/.cluster-b-view", dir);
    mkdir(other, 0700);
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(other, dir, NULL, MS_BIND, NULL) != 0) {
      fprintf(stderr, "SKIP: cannot make a mount namespace for cluster B: %s\n", strerror(errno));
      MMPI_Abort(MMPI_COMM_WORLD, 77);
    }
  }
  MMPI_Barrier(MMPI_COMM_WORLD);
  path_of(p, sizeof p, "notshared.dat");
  MPI_File fh = MPI_FILE_NULL;
  const int rc =
      MMPI_File_open(MMPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  int cls = 0;
  MMPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_NO_SUCH_FILE || fh != MPI_FILE_NULL)
    FAIL("open across unshared directories: class %d", cls);
  struct stat sb;
  if (low && stat(p, &sb) == 0) FAIL("%s was created on cluster A", p);
  int ok = 1, all = 0;
  MMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MMPI_COMM_WORLD);
  if (rank == 0 && all == size) printf("PASS notshared %d ranks refused\n", size);
  fflush(stdout);
  return 3;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s access|shared|consistency|atomic|notshared|all DIR\n", argv[0]);
    return 2;
  }
  MMPI_Init(&argc, &argv);
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  const char* group = getenv("MMPI_GROUP");
  low = group == NULL || strcmp(group, "high") != 0;
  dir = argv[2];
  const char* t = argv[1];
  const int all = strcmp(t, "all") == 0;
  int rc = 0;
  if (strcmp(t, "notshared") == 0) {
    rc = test_notshared();
  } else {
    if (all || strcmp(t, "access") == 0) test_access();
    if (all || strcmp(t, "shared") == 0) test_shared();
    if (all || strcmp(t, "consistency") == 0) test_consistency();
    if (all || strcmp(t, "atomic") == 0) test_atomic();
    MMPI_Barrier(MMPI_COMM_WORLD);
    if (rank == 0) printf("PASS %s %d ranks\n", t, size);
  }
  MMPI_Finalize();
  return rc;
}
