"""zipper-run --profile FILE: every rank counts what it sends to each other
rank, and at MPI_Finalize MPI_COMM_WORLD rank 0 writes the job's
communication matrix to FILE (MMPI_PROFILE; format "zipper-comm-matrix",
docs/placement.md), which zipper-place reads.

The file is checked before the run (its directory must be writable, so that
a long run does not end without its matrix) and, where zipper-run sees rank
0's file system (--local, --emulated), after it.
"""

import os

from .errors import Fatal, UsageError, say


def resolve(path):
    """FILE as an absolute path (the ranks' working directory may differ),
    after checking that it can be written; UsageError/Fatal otherwise."""
    if not path:
        raise UsageError("--profile needs a file name")
    path = os.path.abspath(path)
    if os.path.isdir(path):
        raise UsageError(f"--profile {path}: is a directory")
    d = os.path.dirname(path)
    if not os.path.isdir(d):
        raise Fatal(f"--profile {path}: no directory {d}")
    if not os.access(d, os.W_OK | os.X_OK):
        raise Fatal(f"--profile {path}: cannot write in {d}")
    return path


def started(path):
    """What the file is before the run (its inode and mtime, or None)."""
    try:
        st = os.stat(path)
        return (st.st_ino, st.st_mtime_ns)
    except OSError:
        return None


def check_written(path, before):
    """After a successful run: 0 when rank 0 wrote a new matrix to `path`,
    else 1 with one line saying so (the ranks' own line says why)."""
    now = started(path)
    if now is None or now == before:
        say(f"error: the job ended but wrote no communication matrix to {path} "
            "(see the ranks' 'MMPI_PROFILE' line above)")
        return 1
    say(f"communication matrix: {path}")
    return 0
