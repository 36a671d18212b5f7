/* A 1+1 point-to-point loop whose zipperd is killed mid-run
 * (tests/errors/zipperd_kill.sh), one mode per MPI error handler setting:
 *   default  no handler set: MMPI_COMM_WORLD's default, MPI_ERRORS_ARE_FATAL
 *   fatal    MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
 *   return   MPI_ERRORS_RETURN: once a call failed, every later call with the
 *            other cluster must fail too, and no call may succeed with wrong
 *            data; prints "PASS return ..." and exits 0
 *   user     a user handler on a duplicate of MMPI_COMM_WORLD (inherited
 *            from it): called once per failing call, with that communicator
 *            and the code the call returns; prints "PASS user ..."
 *   busy     default handler, but rank 1 stops calling MMPI after the loop
 *            started (it computes): only cluster A sees the failure, and
 *            zipper-run must stop cluster B
 * Rank 0 prints "LOOPING" once the first exchanges went through, then the
 * ranks exchange a checked 1 KiB message every 10 ms for up to 60 s. In the
 * fatal modes the job must end by itself within seconds of the kill. */
#include <mmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 256

static MPI_Comm comm;
static int handler_calls, handler_last_code, handler_wrong_comm;

static void fail(const char* what) {
  fprintf(stderr, "FAIL %s\n", what);
  exit(1);
}

static void count_errors(MPI_Comm* c, int* code, ...) {
  ++handler_calls;
  handler_last_code = *code;
  if (*c != comm) ++handler_wrong_comm;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "default";
  if (MMPI_Init(&argc, &argv) != MPI_SUCCESS) fail("MMPI_Init");
  int rank = -1, size = 0;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  if (size != 2) fail("needs 1+1 ranks");
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  if (strcmp(mode, "fatal") == 0) {
    if (MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)) fail("set FATAL");
  } else if (strcmp(mode, "return") == 0) {
    if (MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, MPI_ERRORS_RETURN)) fail("set RETURN");
  } else if (strcmp(mode, "user") == 0) {
    if (MMPI_Comm_create_errhandler(count_errors, &h)) fail("create handler");
    if (MMPI_Comm_set_errhandler(MMPI_COMM_WORLD, h)) fail("set user handler");
    if (MMPI_Errhandler_free(&h)) fail("free handler"); /* the communicator keeps it */
  } else if (strcmp(mode, "default") != 0 && strcmp(mode, "busy") != 0) {
    fail("unknown mode");
  }
  comm = MMPI_COMM_WORLD;
  if (strcmp(mode, "user") == 0) {
    if (MMPI_Comm_dup(MMPI_COMM_WORLD, &comm)) fail("dup");
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    if (MMPI_Comm_get_errhandler(comm, &got) || got == MPI_ERRORS_ARE_FATAL ||
        got == MPI_ERRORS_RETURN)
      fail("the duplicate did not inherit the user handler");
    MMPI_Errhandler_free(&got);
  }
  const int peer = 1 - rank;
  unsigned char out[N], in[N];
  int calls = 0, failed = 0, first_failed_call = -1, wrong = 0, ok_after_failure = 0;
  int handler_mismatch = 0;
  const double end = now() + 60;
  for (int it = 0; now() < end && failed < 20; ++it) {
    for (int i = 0; i < N; ++i) out[i] = (unsigned char)(it * 7 + i + rank);
    memset(in, 0, sizeof in);
    for (int k = 0; k < 2; ++k) {
      const int before = handler_calls;
      /* Rank 0 sends first, rank 1 receives first. */
      const int rc = (k == 0) == (rank == 0)
                         ? MMPI_Send(out, N, MPI_BYTE, peer, it, comm)
                         : MMPI_Recv(in, N, MPI_BYTE, peer, it, comm, MPI_STATUS_IGNORE);
      ++calls;
      const int want_calls = before + (rc != MPI_SUCCESS && strcmp(mode, "user") == 0);
      if (handler_calls != want_calls ||
          (rc != MPI_SUCCESS && handler_calls > before && handler_last_code != rc))
        ++handler_mismatch;
      if (rc != MPI_SUCCESS) {
        ++failed;
        if (first_failed_call < 0) first_failed_call = calls;
      } else if (first_failed_call >= 0) {
        ++ok_after_failure;
      } else if ((k == 0) != (rank == 0)) {
        for (int i = 0; i < N; ++i)
          if (in[i] != (unsigned char)(it * 7 + i + peer)) {
            ++wrong;
            break;
          }
      }
    }
    if (it == 20 && rank == 0) {
      printf("LOOPING\n");
      fflush(stdout);
    }
    if (it == 20 && rank == 1 && strcmp(mode, "busy") == 0) {
      struct timespec hour = {3600, 0};
      nanosleep(&hour, NULL); /* no more MMPI calls: it never sees the failure */
    }
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  if (strcmp(mode, "return") != 0 && strcmp(mode, "user") != 0)
    fail("a fatal error handler let the program go on"); /* only if the loop ended */
  printf(
      "rank %d: %d calls, %d failed (first at call %d), %d succeeded after a failure, "
      "%d with wrong data, handler called %d times (%d mismatches, %d wrong communicator)\n",
      rank, calls, failed, first_failed_call, ok_after_failure, wrong, handler_calls,
      handler_mismatch, handler_wrong_comm);
  if (failed == 0) fail("no call failed: was zipperd killed?");
  if (ok_after_failure || wrong) fail("calls succeeded after the link failed, or wrong data");
  if (handler_mismatch || handler_wrong_comm ||
      handler_calls != (strcmp(mode, "user") == 0 ? failed : 0))
    fail("the handler was not called exactly once per failed call with its code and communicator");
  printf("PASS %s rank %d\n", mode, rank);
  fflush(stdout);
  if (comm != MMPI_COMM_WORLD) MMPI_Comm_free(&comm);
  MMPI_Finalize();
  return 0;
}
