"""Messages, errors and small helpers shared by the zipper-run modules."""

import os
import re
import shlex
import shutil
import sys

PROG = "zipper-run"


class Fatal(Exception):
    """A launcher error: printed as 'PROG: error: MSG', exit status `code`."""

    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


class UsageError(Fatal):
    """A command-line error: exit status 2 with a pointer to --help."""

    def __init__(self, msg):
        super().__init__(msg, 2)


def say(*words):
    """One line on stderr, prefixed with the program name."""
    print(f"{PROG}: {' '.join(str(w) for w in words)}", file=sys.stderr, flush=True)


def quote_cmd(argv):
    """POSIX-shell rendering of argv (dry run, messages, the remote ssh command)."""
    out = []
    for a in argv:
        a = str(a)
        if a and re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", a):
            out.append(a)
        else:
            out.append(shlex.quote(a) if a else "''")
    return " ".join(out)


def is_uint(s):
    return bool(re.fullmatch(r"[0-9]+", s or ""))


def is_posint(s):
    return bool(re.fullmatch(r"[1-9][0-9]*", s or ""))


def is_u64(s):
    return bool(re.fullmatch(r"[0-9]{1,20}", s or "")) and int(s) <= 2**64 - 1


def ncpus():
    """CPUs of the machine (not of our affinity mask: inside taskset nproc says 1)."""
    return max(1, os.cpu_count() or 1)


def find_bin(name, opt, envname, self_dir):
    """Locate a helper: option > environment variable > next to zipper-run > PATH.

    Returns the absolute resolved path, or None if it is not found at all.
    Raises Fatal if the one the user chose explicitly is unusable.
    """
    envval = os.environ.get(envname, "")
    if opt:
        p, src = opt, f"--{name}"
    elif envval:
        p, src = envval, f"${envname}"
    elif os.path.isfile(os.path.join(self_dir, name)) and os.access(os.path.join(self_dir, name), os.X_OK):
        p, src = os.path.join(self_dir, name), self_dir
    else:
        p = shutil.which(name)
        if not p:
            return None
        src = "PATH"
    if "/" not in p:
        found = shutil.which(p)
        if not found:
            raise Fatal(f"{name} (from {src}) not found in PATH")
        p = found
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        raise Fatal(f"{name}: '{p}' (from {src}) is not an executable file")
    return os.path.realpath(p)
