#!/usr/bin/env python3
"""Checks loopback_ports.py, the port choice of the local itests
(run_itest.sh, failover_itest.sh), against what made them fail now and then:
a port an outgoing connection left in TIME_WAIT.

  loopback_ports_test.py BIN_DIR

1. The hazard is real: with an outgoing connection's TIME_WAIT on port P and
   nothing listening there, zipperd --listen A=127.0.0.1:P exits at start
   with "Address already in use" (what zipper-run then reports as "zipperd
   failed to start", in under a second on a quiet host).
2. The picker never returns such a port: over a two-port range whose first
   port is held that way it returns the second; over the held port alone it
   fails with exit status 1 and one line.
3. The default choice lies outside the kernel's ephemeral range, and its N
   ports bind.
Prints "PASS loopback_ports" when every check holds.
"""
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PICKER = os.path.join(HERE, "loopback_ports.py")
sys.path.insert(0, HERE)
import loopback_ports  # noqa: E402

errors = 0


def check(cond, msg):
    global errors
    if not cond:
        errors += 1
        print(f"FAIL: {msg}")


def time_wait_port():
    """A port of 127.0.0.1, in loopback_ports' default range, that an outgoing
    connection left in TIME_WAIT (the client closes first), nothing listening."""
    lo, hi = loopback_ports.candidate_range()
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        for _ in range(200):
            p = loopback_ports.pick(2, lo, hi)  # p+1 free too: the picker's next choice
            if p is None:
                break
            c = socket.socket()  # no SO_REUSEADDR, as an ordinary client
            try:
                c.bind(("127.0.0.1", p))
            except OSError:
                c.close()
                continue
            c.connect(srv.getsockname())
            a, _ = srv.accept()
            c.close()  # the active closer keeps TIME_WAIT for 60 s
            a.close()
            return p
    print("FAIL: no port to hold")
    sys.exit(1)


def main():
    bindir = sys.argv[1]
    held = time_wait_port()
    check(not loopback_ports.binds(held), f"port {held} in TIME_WAIT binds (kernel changed?)")

    # 1. zipperd on that port dies at start.
    with tempfile.TemporaryDirectory() as d:
        try:
            r = subprocess.run([os.path.join(bindir, "zipperd"), "--listen",
                                f"A=127.0.0.1:{held}", "--host-key", os.path.join(d, "key")],
                               capture_output=True, text=True, timeout=20)
            out = r.stdout + r.stderr
            check(r.returncode != 0 and "Address already in use" in out,
                  f"zipperd on a TIME_WAIT port: status {r.returncode}, output {out[-300:]!r}")
        except subprocess.TimeoutExpired:  # run() killed it
            check(False, f"zipperd listened on port {held}, held in TIME_WAIT (kernel changed?)")

    # 2. The picker skips it, and says so when it is the only candidate.
    r = subprocess.run([sys.executable, PICKER, "--range", str(held), str(held + 2)],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and r.stdout.strip() == str(held + 1),
          f"picker over {held}..{held + 1}: status {r.returncode}, {r.stdout!r} (want {held + 1})")
    r = subprocess.run([sys.executable, PICKER, "--range", str(held), str(held + 1)],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and r.stdout == "" and "no 1 consecutive free ports" in r.stderr,
          f"picker over the held port alone: status {r.returncode}, {r.stdout!r} {r.stderr!r}")
    r = subprocess.run([sys.executable, PICKER, "2", "--range", str(held), str(held + 2)],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1, f"two ports over {held}..{held + 1}: status {r.returncode}")

    # 3. The default: below (or above) the ephemeral range, every port binds.
    elo, ehi = loopback_ports.ephemeral_range()
    for n in (1, 3):
        for _ in range(10):
            r = subprocess.run([sys.executable, PICKER, str(n)], capture_output=True, text=True,
                               timeout=30)
            p = int(r.stdout) if r.returncode == 0 and r.stdout.strip().isdigit() else -1
            check(p > 0, f"picker {n}: status {r.returncode}, {r.stdout!r} {r.stderr!r}")
            if p <= 0:
                break
            check(p + n - 1 < elo or p > ehi,
                  f"picker {n} chose {p}, inside the ephemeral range {elo}-{ehi}")
            check(all(loopback_ports.binds(p + j) for j in range(n)),
                  f"picker {n} chose {p}, which does not bind")

    if errors:
        print(f"loopback_ports: {errors} checks failed")
        return 1
    print("PASS loopback_ports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
