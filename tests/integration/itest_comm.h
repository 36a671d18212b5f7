/* The communicator an integration suite runs on, chosen by the suffix of the
 * test name: "ring@split" runs the ring test on the "split" communicator.
 * Shared by mmpi_itest.c and mmpi_coll_itest.c. Every variant is made by the
 * MMPI constructors and checked against the membership computed here
 * independently from the world layout (x = MMPI_NP_LOW low-cluster ranks):
 *   world        MMPI_COMM_WORLD
 *   split        Comm_split spanning both clusters with uneven sizes: all
 *                ranks but the high cluster's first (x + y-1 ranks) when
 *                y >= 2; that rank runs the suite alone on its own size-1
 *                communicator at the same time
 *   cluster      Comm_split by cluster: each cluster runs the suite on its own
 *                communicator, which lies inside one cluster
 *   reversed     Comm_split with one colour and keys reversed: a reordered
 *                dup (the high cluster's ranks first, in reverse)
 *   interleaved  Comm_split with keys alternating the clusters (low 0, high 0,
 *                low 1, high 1, ...): each cluster's ranks are not consecutive
 *   self         Comm_split with a colour per rank: size-1 communicators
 * The suites use `comm`, `rank`, `size`; `is_low(r)` tells the cluster of
 * rank r of `comm`. */
#ifndef ITEST_COMM_H
#define ITEST_COMM_H

#include <mmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm comm = MPI_COMM_NULL;
static int world_rank, world_size, world_x;
static int comm_world[4096]; /* world rank of each rank of comm */

static int is_low(int r) { return comm_world[r] < world_x; }

/* Colour and key of world rank w for `variant`; -1 for an unknown variant. */
static int itest_color_key(const char* variant, int w, int* key) {
  const int x = world_x, y = world_size - world_x;
  *key = w;
  if (strcmp(variant, "split") == 0) return y >= 2 && w == x ? 1 : 0;
  if (strcmp(variant, "cluster") == 0) return w < x ? 0 : 1;
  if (strcmp(variant, "reversed") == 0) {
    *key = world_size - 1 - w;
    return 0;
  }
  if (strcmp(variant, "interleaved") == 0) {
    *key = w < x ? 2 * w : 2 * (w - x) + 1;
    return 0;
  }
  if (strcmp(variant, "self") == 0) return w;
  return -1;
}

/* Splits `name` ("test@variant") into the test and the communicator, makes
 * the communicator and checks its size, rank, members (by a ring of world
 * ranks over it) and its comparison with MMPI_COMM_WORLD. Returns 0 on an
 * unknown variant. `fail` reports and aborts. */
static int itest_comm_setup(char* name, void (*fail)(const char*)) {
  MMPI_Comm_rank(MMPI_COMM_WORLD, &world_rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &world_size);
  const char* e = getenv("MMPI_NP_LOW");
  world_x = e ? atoi(e) : world_size / 2;
  if (world_size > 4096) fail("too many ranks for the test");
  char* at = strchr(name, '@');
  const char* variant = "world";
  if (at) {
    *at = '\0';
    variant = at + 1;
  }
  if (strcmp(variant, "world") == 0) {
    comm = MMPI_COMM_WORLD;
    for (int w = 0; w < world_size; ++w) comm_world[w] = w;
    return 1;
  }
  int key, keys[4096], n = 0;
  const int color = itest_color_key(variant, world_rank, &key);
  if (color < 0) return 0;
  if (MMPI_Comm_split(MMPI_COMM_WORLD, color, key, &comm) != MPI_SUCCESS) fail("Comm_split failed");
  /* Expected members: same colour, ordered by (key, world rank). */
  for (int w = 0; w < world_size; ++w) {
    int k;
    if (itest_color_key(variant, w, &k) != color) continue;
    int i = n++;
    while (i > 0 && keys[i - 1] > k) {
      keys[i] = keys[i - 1];
      comm_world[i] = comm_world[i - 1];
      --i;
    }
    keys[i] = k;
    comm_world[i] = w;
  }
  int size = -1, rank = -1;
  MMPI_Comm_size(comm, &size);
  MMPI_Comm_rank(comm, &rank);
  if (size != n) fail("split communicator has the wrong size");
  if (comm_world[rank] != world_rank) fail("split communicator ranks the caller wrongly");
  /* Members: each rank sends its world rank to the next; the received one
   * must be the expected previous member's. */
  int got = -1;
  if (MMPI_Sendrecv(&world_rank, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT,
                    (rank + size - 1) % size, 1, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    fail("ring over the split communicator failed");
  if (got != comm_world[(rank + size - 1) % size]) fail("split communicator has the wrong members");
  int cmp = -1;
  MMPI_Comm_compare(comm, MMPI_COMM_WORLD, &cmp);
  const int expect = size == world_size
                         ? (strcmp(variant, "reversed") == 0 || strcmp(variant, "interleaved") == 0
                                ? MPI_SIMILAR
                                : MPI_CONGRUENT)
                         : MPI_UNEQUAL;
  if (cmp != expect) fail("Comm_compare with MMPI_COMM_WORLD gave the wrong answer");
  return 1;
}

/* Frees the communicator (after the suite). */
static void itest_comm_done(void (*fail)(const char*)) {
  if (comm == MMPI_COMM_WORLD) return;
  if (MMPI_Comm_free(&comm) != MPI_SUCCESS || comm != MPI_COMM_NULL) fail("Comm_free failed");
}

#endif
