"""Run one test program natively (`mpirun -np N --oversubscribe`) or across the
clusters (`zipper-run --local --transparent -x X -y Y`), each in a fresh
working directory and under a time limit, and judge the outcome as MPICH's
runtests does: "No Errors" printed and exit status 0 (or, for the
testlist's `resultTest=TestStatus*`/`TestErrFatal`, a non-zero status).
"""

import os
import random
import re
import shutil
import signal
import sys
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "integration"))
import loopback_ports  # noqa: E402  (tests/integration/loopback_ports.py)

NO_ERRORS = re.compile(r"^\s*No [Ee]rrors\s*$", re.M)
ERROR_HINT = re.compile(r"error|fail|abort|assert|signal|segmentation|expected|unsupported|"
                        r"time|killed|not |wrong|invalid|mmpi\[|mismatch|exited", re.I)
SOURCE_SUFFIXES = (".c", ".o", ".h", ".a", ".am", ".in", ".mk", ".mtest", ".build-error", ".cxx",
                   ".f", ".f90")


@dataclass
class Outcome:
    passed: bool
    status: str        # PASS, FAIL, TIMEOUT
    rc: int
    seconds: float
    first_error: str   # first line that explains a failure ("" on pass)
    log: str           # path of the full output


def judge(output, rc, result_test):
    """True if the run passed under MPICH's rule for `result_test`."""
    noerr = bool(NO_ERRORS.search(output))
    if result_test in ("TestStatus", "TestErrFatal"):
        return rc != 0
    if result_test == "TestStatusNoErrors":
        return noerr and rc != 0
    if result_test == "TestBench":
        return rc == 0
    return noerr and rc == 0


def first_error(output, rc, timed_out):
    """The line that best explains a failed run: the program's own first error
    line, else the launcher's (zipper-run: timeout, a cluster's exit), else the status."""
    lines = [l.strip() for l in output.splitlines()]
    program = [l for l in lines if l and not l.startswith(("zipper-run:", "|"))]
    launcher = [l for l in lines if l.startswith("zipper-run:") and
                not l.startswith(("zipper-run: starting", "zipper-run: zipperd running",
                                  "zipper-run: zipperd log"))]
    for group in (program, launcher):
        for s in group:
            if not NO_ERRORS.match(s) and ERROR_HINT.search(s):
                return s[:300]
    if timed_out:
        return "timed out (no error line)"
    if rc < 0 or rc > 128:
        sig = -rc if rc < 0 else rc - 128
        try:
            return f"killed by {signal.Signals(sig).name}"
        except ValueError:
            return f"exit status {rc}"
    if rc != 0:
        return f"exit status {rc}"
    return "no 'No Errors' line"


_port_lock = threading.Lock()
# Below the kernel's ephemeral range: a port an outgoing connection holds
# (TIME_WAIT included) makes zipperd's bind fail though nothing listens
# (tests/integration/loopback_ports.py).
_PORT_LO, _PORT_HI = loopback_ports.candidate_range()
_next_port = [_PORT_LO + random.randrange(0, _PORT_HI - _PORT_LO)]


def free_port():
    """A loopback TCP port that binds now (zipper-run --local would otherwise
    meet a zipperd that already answers there, or zipperd fail to bind)."""
    with _port_lock:
        for _ in range(200):
            p = _next_port[0]
            _next_port[0] = _PORT_LO + (p - _PORT_LO + 7) % (_PORT_HI - _PORT_LO)
            if loopback_ports.binds(p):
                return p
    raise RuntimeError("no free loopback port found")


class Launcher:
    """Runs programs; `zipper_run` is the launcher's path, `logs` the log directory."""

    def __init__(self, zipper_run, mpirun, logs, scratch):
        self.zipper_run = zipper_run
        self.mpirun = mpirun
        self.logs = logs
        self.scratch = scratch

    def _rundir(self, exe):
        """A fresh directory holding links to the test directory's data files."""
        d = tempfile.mkdtemp(prefix="run.", dir=self.scratch)
        src = os.path.dirname(exe)
        for f in os.listdir(src):
            p = os.path.join(src, f)
            if (os.path.isfile(p) and not f.endswith(SOURCE_SUFFIXES) and not os.access(p, os.X_OK)
                    and not f.startswith(("Makefile", "testlist", "."))):
                os.symlink(p, os.path.join(d, f))
        return d

    def command(self, entry, exe, n, split, limit):
        """argv for a native run of `n` ranks (split None) or a zipper run (split (x, y))."""
        if split is None:
            cmd = [self.mpirun, "-np", str(n), "--oversubscribe", "--bind-to", "none"]
            if n > (os.cpu_count() or 1):
                cmd += ["--mca", "mpi_yield_when_idle", "1"]
            if entry.dir == "rma":
                # Open MPI 4.1's osc/rdma crashes (compare-and-swap to self over
                # vader): the native baseline uses osc/sm and osc/pt2pt.
                cmd += ["--mca", "osc", "sm,pt2pt"]
            for kv in entry.env:
                cmd += ["-x", kv]
            return cmd + [exe] + entry.args
        x, y = split
        cmd = [self.zipper_run, "--local", "--transparent", "-x", str(x), "-y", str(y),
               "--port", str(free_port()), "--timeout", str(limit), "--grace", "5"]
        for kv in entry.env:
            cmd += ["--env", kv]
        return cmd + ["--", exe] + entry.args

    def run(self, entry, exe, n, split, limit, log_name):
        cwd = self._rundir(exe)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   TMPDIR=cwd)
        cmd = self.command(entry, exe, n, split, limit)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        timed_out = False
        try:
            out, _ = p.communicate(timeout=limit + 20)
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)  # the session this run started, nothing else
                except ProcessLookupError:
                    break
                try:
                    out, _ = p.communicate(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    out = b""
        secs = time.monotonic() - t0
        text = out.decode(errors="replace") if out else ""
        rc = p.returncode if p.returncode is not None else -9
        if split is not None and rc == 124:
            timed_out = True
        log = os.path.join(self.logs, log_name)
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "w") as f:
            f.write(f"$ {' '.join(cmd)}\n(cwd {cwd})\n{text}\n[exit status {rc} after {secs:.1f} s"
                    f"{', timed out' if timed_out else ''}]\n")
        shutil.rmtree(cwd, ignore_errors=True)
        ok = judge(text, rc, entry.opts.get("resultTest", "")) and not timed_out
        status = "PASS" if ok else ("TIMEOUT" if timed_out else "FAIL")
        return Outcome(ok, status, rc, secs, "" if ok else first_error(text, rc, timed_out), log)
