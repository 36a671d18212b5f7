/* Checks shared by the suites that run on MMPI_COMM_WORLD and report where
 * they failed (mmpi_inter_itest.c, mmpi_topo_itest.c, mmpi_coll_itest.c,
 * mmpi_ops_itest.c): FAIL aborts the job with the rank, the source line and
 * the current CASE; EXPECT counts each check so a suite can say how many
 * held. A suite that names its cases otherwise (a prefix, a verbose line)
 * defines CASE before including this header. */
#ifndef ITEST_CHECK_H
#define ITEST_CHECK_H

#include <mmpi.h>
#include <stdio.h>

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
#ifndef CASE
#define CASE(...) snprintf(where, sizeof where, __VA_ARGS__)
#endif
#define CHECK_MPI(call)                                         \
  do {                                                          \
    int rc_ = (call);                                           \
    if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_); \
  } while (0)
#define EXPECT(cond, ...)           \
  do {                              \
    if (!(cond)) FAIL(__VA_ARGS__); \
    ++checks;                       \
  } while (0)

#endif
