"""Rank wrapper of `zipper-run --slurm`: srun starts it as every task, it execs the program.

    python3 slurm_rank.py PROGRAM [ARGS...]

The job secret arrives on standard input (`srun --input=all` copies
zipper-run's pipe to every task): the first 65 bytes, 64 hex digits and a
newline. They go into a memfd of mode 0600 that the program inherits as
MMPI_JOB_SECRET_FD (libmmpi reads and closes it, docs/launch-contract.md), so
the secret is in no environment variable Slurm records or /proc/PID/environ
shows, in no argv and in no file on disk; the memfd goes with the process.
The rest of standard input is the program's.

Exit status: the program's (it replaces this process); 1 with a one-line
message when the secret is missing or malformed, 127 when the program
cannot be started.
"""

import os
import re
import sys

SECRET_LINE = 65  # 64 hex digits + "\n"


def read_secret(fd=0):
    """The 64 hex digits read from fd (exactly SECRET_LINE bytes, no more:
    what follows is the program's input). ValueError when short or malformed."""
    data = b""
    while len(data) < SECRET_LINE:
        chunk = os.read(fd, SECRET_LINE - len(data))
        if not chunk:
            break
        data += chunk
    if len(data) != SECRET_LINE or not re.fullmatch(rb"[0-9a-f]{64}\n", data):
        raise ValueError(f"expected the job secret on standard input (64 hex digits and a newline), "
                         f"got {len(data)} byte(s)")
    return data[:64]


def secret_fd(secret):
    """An inheritable memfd (mode 0600, offset 0) holding `secret`."""
    fd = os.memfd_create("zipper-job-secret", 0)
    os.fchmod(fd, 0o600)
    os.write(fd, secret + b"\n")
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd


def main(argv):
    if not argv:
        print("zipper-run rank wrapper: no program given", file=sys.stderr)
        return 2
    try:
        secret = read_secret()
    except (ValueError, OSError) as e:
        print(f"zipper-run rank wrapper on {os.uname().nodename}: {e}", file=sys.stderr)
        return 1
    os.environ["MMPI_JOB_SECRET_FD"] = str(secret_fd(secret))
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        print(f"zipper-run rank wrapper on {os.uname().nodename}: cannot run {argv[0]}: {e.strerror}",
              file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
