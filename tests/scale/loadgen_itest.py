#!/usr/bin/env python3
"""zipper-loadgen in CI at small size: two zipperds on loopback (no
namespaces, no root), two steady jobs of 96+96 ranks exchanging with
neighbours (768 ranks' connections per zipperd), and 6 churn jobs of 8+8
beside them, half of them vanishing without BYE.

  loadgen_itest.py BINDIR [--port P]

--port P: zipperds on P..P+5 (default: ports the kernel picks). Checks,
apart from the load generator's own (every message's sequence and payload,
zipperd's counters against what was sent): the message counts this test
computes from the layout, that zipperd's counters were compared at all,
that every job was admitted and the vanishing jobs vanished, and that both
zipperds exit cleanly afterwards. Exit status 0 pass, 1 fail.
"""
import argparse
import json
import os
import subprocess
import sys

JOBS, X, Y, DEGREE, MESSAGES = 2, 96, 96, 4, 20
CHURN_JOBS, CX, CY, CHURN_MESSAGES = 6, 8, 8, 10


def expected():
    # neighbours: every rank sends to DEGREE ranks of the other group; ring:
    # one each. Directed pairs x messages x jobs.
    steady = JOBS * (X + Y) * DEGREE * MESSAGES
    churn = CHURN_JOBS * (CX + CY) * CHURN_MESSAGES
    return steady, churn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bindir")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    sys.path.insert(0, a.bindir)
    from zipper_bench_zipperd import LocalZipperd  # noqa: E402  (configured into BINDIR)

    limits = ["--max-memory", "16MiB", "--max-jobs-per-user", "64", "--max-jobs-per-prefix", "64",
              "--max-job-connections-share", "100"]
    zs = [LocalZipperd(os.path.join(a.bindir, "zipperd"), limits,
                       port=a.port + 3 * i if a.port else 0) for i in range(2)]
    failures = []
    try:
        for z in zs:
            z.start()
        cmd = [os.path.join(a.bindir, "zipper-loadgen"), "--procs", "2", "--timeout", "60"]
        for z in zs:
            cmd += ["--zipperd", z.loadgen_spec()]
        cmd += ["--job", f"count={JOBS},layout={X}+{Y},pattern=neighbours,degree={DEGREE},"
                         f"size=64,messages={MESSAGES}",
                "--churn", f"jobs={CHURN_JOBS},concurrent=2,layout={CX}+{CY},pattern=ring,"
                           f"size=8,messages={CHURN_MESSAGES},vanish=50%"]
        print("+", " ".join(cmd), flush=True)
        run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=120)
        if run.returncode != 0:
            failures.append(f"zipper-loadgen exited with {run.returncode}")
        try:
            rep = json.loads(run.stdout)
        except json.JSONDecodeError:
            print(run.stdout)
            failures.append("zipper-loadgen's output is not JSON")
            rep = None
        if rep:
            failures += check(rep)
            g = rep["groups"][0]
            print(f"steady: {g['received']} messages checked, p50 {g['latency_us']['p50']:.0f} us, "
                  f"p99 {g['latency_us']['p99']:.0f} us; admission per job "
                  f"{g['job_admission_s']['max']:.3f} s (max); wall {rep['wall_s']:.2f} s")
    finally:
        for z in zs:
            if failures and z.proc and z.proc.poll() is None:
                print(f"zipperd {z.pid} log:\n{z.log_tail()}")
            z.stop()
            if z.proc and z.proc.returncode != 0:
                failures.append(f"zipperd exited with status {z.proc.returncode} on SIGTERM")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def check(rep):
    out = []
    steady, churn = expected()
    if not rep["ok"]:
        out.append("the load generator reports faults: " + "; ".join(rep["errors"]))
    if not rep["counters_checked"]:
        out.append("zipperd's counters were not compared")
    bad = [c for c in rep["checks"] if not c["ok"]]
    out += [f"check {c['what']} (zipperd {c['zipperd']}): expected {c['expected']}, "
            f"got {c['got']}" for c in bad]
    for z in (0, 1):
        if sum(1 for c in rep["checks"] if c["zipperd"] == z) < 10:
            out.append(f"zipperd {z}: its counters were not all compared")
    groups = {g["name"]: g for g in rep["groups"]}
    for name, want in (("job0", steady), ("churn", churn)):
        g = groups.get(name)
        if not g:
            out.append(f"no group {name} in the report")
            continue
        for field in ("expected", "sent", "received"):
            if g[field] != want:
                out.append(f"{name}: {field} {g[field]}, this test expects {want}")
    if groups.get("job0", {}).get("job_admission_s", {}).get("count") != JOBS:
        out.append("not every steady job was admitted")
    c = groups.get("churn", {})
    if c.get("jobs_vanished") != CHURN_JOBS // 2 or c.get("job_admission_s", {}).get(
            "count") != CHURN_JOBS:
        out.append(f"churn: {c.get('jobs_vanished')} jobs vanished of "
                   f"{c.get('job_admission_s', {}).get('count')} admitted; expected "
                   f"{CHURN_JOBS // 2} of {CHURN_JOBS}")
    return out


if __name__ == "__main__":
    sys.exit(main())
