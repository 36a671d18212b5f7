"""POSIX-shell quoting of an argv for dry runs, messages and remote commands."""

import re
import shlex


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

