#!/usr/bin/env python3
"""A squatter on the forwarder's address gets nothing from a run.

An unprivileged user (created here as 'zipsquat' when missing, else
'nobody') runs a complete fake zipperd, a real zipperd binary with its own
host key, on 127.0.0.1:P. Then:
- `zipper-run --local --port P` fails with one error line naming the port and
  the squatter's pid, and starts no zipperd;
- `zipper-run --local --zippers 2 --port P-1` (P = PORT+1 squatted) the same;
- ranks started without any pinned key (no MMPI_FORWARDER_KEYS, no
  known_forwarders, default MMPI_FORWARDER_KEY_CHECK) refuse the squatter:
  both groups end non-zero, print no PASS, and the squatter admits no job;
- `zipper-run --local --no-zipperd` with nothing pinned refuses to start.

usage: launcher_squatter.py BIN_DIR
Exit 77 when not root or setpriv is missing.
"""

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ""
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
for var in ("MMPI_FORWARDER_KEYS", "MMPI_KNOWN_FORWARDERS", "MMPI_FORWARDER_KEY_CHECK", "ZIPPERD"):
    ENV.pop(var, None)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def free_pair():
    """A port P-1 whose successor P is free too (each checked by binding).

    Candidates lie below the ephemeral range: bind(0) hands out even ports and
    connect() odd ones, so after a busy suite P+1 of an ephemeral P is often in
    TIME_WAIT. SO_REUSEADDR, as zipperd sets it, ignores TIME_WAIT sockets."""
    import random
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    low = max(low, 12000)
    rng = random.Random(os.getpid())
    for _ in range(500):
        p = rng.randrange(10000, low - 2)
        try:
            with socket.socket() as a, socket.socket() as b:
                for s in (a, b):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                a.bind(("127.0.0.1", p))
                b.bind(("127.0.0.1", p + 1))
        except OSError:
            continue
        return p
    fail("no two free adjacent ports")


def squatter_uid():
    try:
        return pwd.getpwnam("zipsquat").pw_uid
    except KeyError:
        pass
    if shutil.which("useradd") and subprocess.call(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "zipsquat"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
        return pwd.getpwnam("zipsquat").pw_uid
    return 65534


class Squatter:
    """A real zipperd with its own key, run as another user on 127.0.0.1:port."""

    def __init__(self, port, uid):
        self.dir = tempfile.mkdtemp(prefix="zipsquat.")
        os.chown(self.dir, uid, uid)
        self.log = os.path.join(self.dir, "log")
        self.proc = subprocess.Popen(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
             os.path.join(BIN, "zipperd"), "--listen", f"A=127.0.0.1:{port}", "--log-level", "info",
             "--host-key", os.path.join(self.dir, "key"), "--pid-file", os.path.join(self.dir, "pid")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV)
        for _ in range(200):
            if os.path.exists(os.path.join(self.dir, "pid")):
                break
            if self.proc.poll() is not None:
                fail(f"the squatter did not start: {self.proc.stdout.read().decode()}")
            time.sleep(0.05)

    def output(self):
        self.proc.terminate()
        out = self.proc.communicate(timeout=20)[0].decode(errors="replace")
        shutil.rmtree(self.dir, ignore_errors=True)
        return out


def zipperds_of_root(ports):
    """Root's zipperd processes listening on one of `ports` (other helpers'
    zipperd on other ports do not count)."""
    n = 0
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{d}").st_uid != 0 or \
                    os.path.basename(os.readlink(f"/proc/{d}/exe")) != "zipperd":
                continue
            with open(f"/proc/{d}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(a.endswith(f"127.0.0.1:{p}") for a in args for p in ports):
            n += 1
    return n


def launcher(args, port):
    before = zipperds_of_root((port - 1, port))
    r = subprocess.run([os.path.join(BIN, "zipper-run"), "--local", "-x", "1", "-y", "1",
                        "--timeout", "60"] + args + ["--", os.path.join(BIN, "mmpi_itest"), "ring"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, timeout=120)
    print(f"$ zipper-run {' '.join(args)} -> {r.returncode}\n{r.stderr.strip()}")
    if r.returncode == 0 or "PASS" in r.stdout:
        fail("the run succeeded against a squatter")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    return r, lines, before


def expect_taken(args, port, squat_pid):
    r, lines, before = launcher(args, port)
    if len(lines) != 1 or f"port {port} is already taken" not in lines[0]:
        fail(f"wanted one error line naming port {port}, got: {lines}")
    if f"pid {squat_pid}" not in lines[0]:
        fail(f"the error does not name the squatter's pid {squat_pid}: {lines[0]}")
    if "starting zipperd" in r.stderr or zipperds_of_root((port - 1, port)) > before:
        fail("zipper-run started a zipperd anyway")


def main():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: needs root and setpriv (a squatter of another user)")
        return 77
    uid = squatter_uid()
    base = free_pair()
    sq = Squatter(base + 1, uid)
    try:
        expect_taken(["--port", str(base + 1)], base + 1, sq.proc.pid)
        expect_taken(["--zippers", "2", "--port", str(base)], base + 1, sq.proc.pid)
        # A site zipperd with nothing pinned: refused before any rank runs.
        _, lines, _ = launcher(["--no-zipperd", "--forwarder-a", f"127.0.0.1:{base + 1}",
                                "--forwarder-b", f"127.0.0.1:{base + 1}"], base + 1)
        if not any("no host key pinned" in ln for ln in lines):
            fail(f"--no-zipperd without a key was not refused: {lines}")
        # Ranks with nothing pinned, started without zipper-run: both groups refuse it.
        rank_env = dict(ENV, MMPI_FORWARDER=f"tcp:127.0.0.1:{base + 1}",
                        MMPI_JOB_SECRET="ab" * 32, MMPI_JOB_ID="2828", MMPI_NP_LOW="1",
                        MMPI_NP_HIGH="1", MMPI_CONNECT_TIMEOUT="10")
        procs = [subprocess.Popen(["mpirun", "-np", "1", "-x", "MMPI_GROUP=" + g,
                                   os.path.join(BIN, "mmpi_itest"), "ring"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  env=rank_env) for g in ("low", "high")]
        for p in procs:
            out = p.communicate(timeout=120)[0]
            print(f"rank group: status {p.returncode}; {out.strip().splitlines()[-1:] or ''}")
            if p.returncode == 0 or "PASS" in out:
                fail("a rank with nothing pinned used the squatter")
            if "no host key pinned" not in out:
                fail(f"the rank did not say why it refused: {out[-800:]}")
    finally:
        log = sq.output()
    if "connected from" in log or "all 2 ranks connected" in log:
        fail(f"the squatter admitted a rank:\n{log}")
    print("PASS: squatter refused in every launcher mode and by unpinned ranks; 0 messages from it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
