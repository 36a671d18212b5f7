/* zipper-slurm-rank: the rank wrapper of `zipper-run --slurm` (docs/slurm.md).
 *
 *     srun ... --input=all zipper-slurm-rank PROGRAM [ARGS...]
 *
 * srun copies zipper-run's standard input to every task; its first 65 bytes
 * are the job secret (64 lowercase hex digits and a newline). They go into a
 * memfd of mode 0600 that PROGRAM inherits as MMPI_JOB_SECRET_FD (libmmpi
 * reads and closes it, docs/launch-contract.md): the secret is in no
 * environment variable Slurm records or /proc/PID/environ shows, in no argv,
 * and in no file on disk; the memfd goes with the process. The rest of
 * standard input is PROGRAM's. Written in C, not Python: it runs once per
 * rank on the start-up path.
 *
 * Exit status: PROGRAM's (it replaces this process); 1 with a one-line
 * message when the secret is missing or malformed, 127 when PROGRAM cannot
 * be run, 2 on usage errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { kSecretLine = 65 };

static int fail(const char* what) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  fprintf(stderr, "zipper-slurm-rank on %s: %s\n", host, what);
  return 1;
}

/* Exactly kSecretLine bytes from fd 0, no more (the rest is the program's). */
static int read_secret(char* buf) {
  size_t got = 0;
  while (got < kSecretLine) {
    ssize_t n = read(0, buf + got, kSecretLine - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  if (buf[64] != '\n') return -1;
  for (int i = 0; i < 64; ++i)
    if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f'))) return -1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: zipper-slurm-rank PROGRAM [ARGS...] (the job secret on stdin)\n");
    return 2;
  }
  char secret[kSecretLine];
  if (read_secret(secret) != 0)
    return fail("expected the job secret on standard input (64 hex digits and a newline)");
  int fd = memfd_create("zipper-job-secret", 0); /* inherited by PROGRAM */
  if (fd < 0 || fchmod(fd, 0600) != 0 || write(fd, secret, kSecretLine) != kSecretLine ||
      lseek(fd, 0, SEEK_SET) != 0)
    return fail("cannot put the job secret into a memfd");
  explicit_bzero(secret, sizeof secret);
  char num[16];
  snprintf(num, sizeof num, "%d", fd);
  if (setenv("MMPI_JOB_SECRET_FD", num, 1) != 0) return fail("setenv failed");
  execvp(argv[1], argv + 1);
  fprintf(stderr, "zipper-slurm-rank: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
