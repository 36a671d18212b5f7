#!/usr/bin/env python3
"""MPI_Abort in one cluster ends the whole job promptly, with its code.

  abort_itest.py BIN_DIR NP_LOW NP_HIGH low|high [--zippers K]

Runs mmpi_abort_itest under `zipper-run --emulated` (one node per cluster,
K bridge nodes): after a first barrier, the last rank of the named group
calls MMPI_Abort(MMPI_COMM_WORLD, 42) while every other rank waits in a
barrier that cannot complete. Checks that zipper-run exits 42, that a rank
of the other cluster says it aborts because of the relayed ABORT (not
zipper-run's --grace kill), that no rank returned from the barrier, and that
the job ended within --bound seconds of the MMPI_Abort call (a generous
bound for a loaded host, far under the 10 s grace the abort used to wait
for: the measured time is printed, speed targets are benchmarks').
Exit 0 on success, 77 when the emulated clusters cannot be built here,
1 with the reason and the job's output otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import time

CODE = 42


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("np_low", type=int)
    ap.add_argument("np_high", type=int)
    ap.add_argument("group", choices=("low", "high"))
    ap.add_argument("--zippers", type=int, default=1)
    ap.add_argument("--bound", type=float, default=5.0,
                    help="seconds from MMPI_Abort to zipper-run's exit")
    a = ap.parse_args()
    emulate = os.path.join(a.bin, "zipper-emulate")
    check = subprocess.run([emulate, "check"], capture_output=True, text=True)
    if check.returncode != 0:
        print(f"SKIP: emulated clusters unavailable: {(check.stdout + check.stderr).strip()}")
        return 77
    subprocess.run([emulate, "up", "--nodes-a", "1", "--nodes-b", "1", "--zippers",
                    str(a.zippers), "--force"], check=True, stdout=subprocess.DEVNULL)
    # --grace stays at its default (10 s): ending sooner must come from the ABORT.
    cmd = [os.path.join(a.bin, "zipper-run"), "-x", str(a.np_low), "-y", str(a.np_high),
           "--timeout", "120", "--emulated", "--nodes-a", "1", "--nodes-b", "1",
           "--zippers", str(a.zippers), "--",
           os.path.join(a.bin, "mmpi_abort_itest"), a.group, str(CODE)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, abort_at = [], None
    for line in proc.stdout:
        if abort_at is None and line.startswith("ABORT_AT "):
            abort_at = time.time()  # when the line reached us (<= a pipe hop after the call)
            stamped = float(line.split()[1])
        lines.append(line)
        sys.stdout.write(line)
    rc = proc.wait()
    ended = time.time()
    out = "".join(lines)
    name = f"abort_itest {a.np_low}+{a.np_high} {a.group} k={a.zippers}"
    problems = []
    if abort_at is None:
        problems.append("no rank printed ABORT_AT (the job did not reach the abort)")
    else:
        took = ended - min(abort_at, stamped)
        print(f"{name}: zipper-run exited {rc}, {took:.3f} s after MMPI_Abort")
        if took > a.bound:
            problems.append(f"the job took {took:.2f} s to end after MMPI_Abort (at most {a.bound})")
    if rc != CODE:
        problems.append(f"zipper-run exited {rc}, not the abort's code {CODE}")
    if "FAIL" in out:
        problems.append("a rank printed FAIL")
    if not re.search(rf"in the other cluster called MPI_Abort with code {CODE}; aborting", out):
        problems.append("no rank of the other cluster reported the relayed abort")
    if "grace period" in out and "killing the remaining cluster" in out:
        problems.append("zipper-run killed a cluster after the grace period")
    for p in problems:
        print(f"{name}: FAIL: {p}")
    if not problems:
        print(f"{name}: OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
