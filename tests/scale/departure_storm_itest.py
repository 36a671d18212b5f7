#!/usr/bin/env python3
"""A departure storm beside another job: one zipperd on loopback, a 1+1 job
exchanging 8 B ping-pongs, and a storm job of N+N virtual ranks
(zipper-loadgen --storm) admitted beside it whose ranks all vanish at once
without BYE, as when a whole job is killed or its nodes fail.

  departure_storm_itest.py BINDIR [--zipperd PATH] [--ranks N] [--bound-ms MS]

Checks: the load generator's own checks (every ping-pong's sequence and
payload, zipperd's counters against what was sent, every job gone at the
end), the storm job admitted and vanished, zipperd alive and exiting cleanly,
and the ping-pong's worst one-way latency over the whole run (the storm's
stall included) under --bound-ms (default 1000 ms: generous, for a loaded
2-core host; the figure is printed, and docs/scale.md has measured ones).
--zipperd: another zipperd binary (to compare builds with the same load).
Exit status 0 pass, 1 fail.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bindir")
    ap.add_argument("--zipperd", default="")
    ap.add_argument("--ranks", type=int, default=2048, help="storm ranks per side")
    ap.add_argument("--rounds", type=int, default=3000, help="ping-pong round trips")
    ap.add_argument("--rate", type=int, default=1000, help="ping-pongs per second")
    ap.add_argument("--after", type=float, default=1.0, help="storm, seconds into the traffic")
    ap.add_argument("--bound-ms", type=float, default=1000.0)
    a = ap.parse_args()
    sys.path.insert(0, a.bindir)
    from zipper_bench_zipperd import LocalZipperd  # noqa: E402  (configured into BINDIR)

    n = a.ranks
    zipperd = a.zipperd or os.path.join(a.bindir, "zipperd")
    limits = ["--max-memory", "32MiB", "--max-job-connections-share", "100",
              "--max-connections", str(2 * n + 256), "--max-ranks", str(2 * n + 2),
              "--ready-timeout", "300", "--hello-timeout", "60"]
    z = LocalZipperd(zipperd, limits, fds=2 * n + 256)
    failures = []
    try:
        z.start()
        cmd = [os.path.join(a.bindir, "zipper-loadgen"), "--procs", "3", "--timeout", "240",
               "--zipperd", z.loadgen_spec(),
               "--job", f"name=pingpong,layout=1+1,pattern=pingpong,size=8,"
                        f"messages={a.rounds},rate={a.rate}",
               "--storm", f"layout={n}+{n},after={a.after}"]
        print("+", " ".join(cmd), flush=True)
        t0 = time.monotonic()
        run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=300)
        wall = time.monotonic() - t0
        if run.returncode != 0:
            failures.append(f"zipper-loadgen exited with {run.returncode}")
        try:
            rep = json.loads(run.stdout)
        except json.JSONDecodeError:
            print(run.stdout)
            failures.append("zipper-loadgen's output is not JSON")
            rep = None
        if rep:
            failures += check(rep, a)
            groups = {g["name"]: g for g in rep["groups"]}
            p, s = groups.get("pingpong", {}), groups.get("storm", {})
            lat = p.get("latency_us", {})
            zs = rep.get("zipperds", [{}])[0]
            print(f"storm of {n}+{n} ranks (admitted in "
                  f"{s.get('job_admission_s', {}).get('max', 0):.2f} s) beside a 1+1 8 B "
                  f"ping-pong: one-way p50 {lat.get('p50', 0):.0f} us, p99 "
                  f"{lat.get('p99', 0):.0f} us, max {lat.get('max', 0) / 1e3:.1f} ms; "
                  f"{p.get('received')} messages checked; zipperd "
                  f"{json.dumps({k: zs[k] for k in zs if 'rss' in k or 'cpu' in k})}; "
                  f"wall {wall:.1f} s", flush=True)
        if z.proc.poll() is not None:
            failures.append(f"zipperd died (status {z.proc.returncode})")
    finally:
        if failures and z.proc and z.proc.poll() is None:
            print(f"zipperd log:\n{z.log_tail()}")
        z.stop()
        if z.proc and z.proc.returncode != 0:
            failures.append(f"zipperd exited with status {z.proc.returncode} on SIGTERM")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def check(rep, a):
    out = []
    if not rep["ok"]:
        out.append("the load generator reports faults: " + "; ".join(rep["errors"]))
    if not rep["counters_checked"]:
        out.append("zipperd's counters were not compared")
    out += [f"check {c['what']}: expected {c['expected']}, got {c['got']}"
            for c in rep["checks"] if not c["ok"]]
    groups = {g["name"]: g for g in rep["groups"]}
    p, s = groups.get("pingpong"), groups.get("storm")
    if not p or not s:
        return out + ["the report lacks the pingpong or storm group"]
    want = 2 * a.rounds
    if p["received"] != want or p["sent"] != want:
        out.append(f"pingpong: sent {p['sent']}, received {p['received']}, expected {want}")
    if s.get("jobs_vanished") != 1 or s["job_admission_s"]["count"] != 1:
        out.append(f"storm: {s.get('jobs_vanished')} vanished of "
                   f"{s['job_admission_s']['count']} admitted; expected 1 of 1")
    worst_ms = p["latency_us"]["max"] / 1e3
    if worst_ms > a.bound_ms:
        out.append(f"pingpong: worst one-way latency {worst_ms:.1f} ms over the bound of "
                   f"{a.bound_ms:.0f} ms")
    return out


if __name__ == "__main__":
    sys.exit(main())
