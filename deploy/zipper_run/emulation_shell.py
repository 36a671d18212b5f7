"""zipper-emulate's program name, its error and the commands it runs (ip, tc)."""

import os
import shutil
import subprocess
import sys

PROG = "zipper-emulate"


class Error(Exception):
    """printed as 'zipper-emulate: error: MSG', exit 1."""


def info(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def need_cmd(name):
    if not shutil.which(name):
        raise Error(f"required command '{name}' not found in PATH")


def need_root():
    if os.geteuid() != 0:
        raise Error("must run as root (network namespaces need CAP_SYS_ADMIN/CAP_NET_ADMIN)")


def run(*argv):
    """Run a command; on failure show it with its output and raise Error."""
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if r.returncode != 0:
        out = r.stdout.strip()
        raise Error(f"command failed: {' '.join(argv)}" + (f"\n{out}" if out else ""))
    return r.stdout


def run_opt(*argv):
    """Best effort (e.g. IPv6 compiled out)."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
