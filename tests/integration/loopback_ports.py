#!/usr/bin/env python3
"""Picks loopback TCP ports for a test's own zipperd (zipper-run --local --port).

  loopback_ports.py [N] [--range LO HI]

Prints P such that ports P..P+N-1 (default N=1) on 127.0.0.1 all bind now.
Candidates lie below the kernel's ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default), from 20000
up, at a random start; where that leaves fewer than 1000 ports, above it.

Why not any port: the kernel gives each outgoing connection a local port from
the ephemeral range, and that port stays taken for as long as the connection
lives and 60 s of TIME_WAIT after it. A listener's bind() on 127.0.0.1:P then
fails with EADDRINUSE even with SO_REUSEADDR, yet nothing listens there, so
zipper-run's check that nobody listens passes and zipperd dies at start
("cannot listen on tcp:127.0.0.1:P: bind: Address already in use"). Every
Open MPI run and every rank's link to zipperd leaves such ports behind, so a
test suite that picks from 20000-39999 blindly hits one now and then. Below
the ephemeral range only explicit binds take ports, and those the bind check
here sees.

--range LO HI (tests): candidates are LO..HI-1 instead. Exit status 1 with
one line on stderr when no candidate binds.
"""
import argparse
import random
import socket
import sys

EPHEMERAL = "/proc/sys/net/ipv4/ip_local_port_range"
FLOOR = 20000  # below: well-known services' range, left alone
MIN_ROOM = 1000


def ephemeral_range():
    """(low, high) of the kernel's ephemeral ports, inclusive."""
    try:
        with open(EPHEMERAL) as f:
            lo, hi = (int(v) for v in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def candidate_range():
    """[lo, hi) of ports no outgoing connection is given."""
    elo, ehi = ephemeral_range()
    if elo - FLOOR >= MIN_ROOM:
        return FLOOR, elo
    if 65536 - (ehi + 1) >= MIN_ROOM:
        return ehi + 1, 65536
    return FLOOR, 65536  # no room outside it: the bind check alone


def binds(port):
    """True when a listener could bind 127.0.0.1:port now."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as zipperd does
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def pick(n, lo, hi, rng=random):
    """First port P of n consecutive ports in [lo, hi) that all bind, trying
    from a random start round the range; None when none does."""
    span = hi - lo - (n - 1)
    if span <= 0:
        return None
    start = rng.randrange(span)
    for i in range(span):
        p = lo + (start + i) % span
        if all(binds(p + j) for j in range(n)):
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=1, help="consecutive ports (default 1)")
    ap.add_argument("--range", nargs=2, type=int, metavar=("LO", "HI"),
                    help="candidates LO..HI-1 (default: below the ephemeral range)")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("N must be at least 1")
    lo, hi = a.range if a.range else candidate_range()
    p = pick(a.n, lo, hi)
    if p is None:
        print(f"loopback_ports.py: no {a.n} consecutive free ports in {lo}..{hi - 1}",
              file=sys.stderr)
        return 1
    print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
