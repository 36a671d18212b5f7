"""zipper-run's program name, its two error kinds and its one-line messages."""

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

