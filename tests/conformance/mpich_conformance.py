#!/usr/bin/env python3
"""Conformance runner: the unmodified MPICH test suite (test/mpi), natively and
across the two clusters through zipper (`zipper-run --local --transparent`).

It copies the suite (never builds in place), writes MTest's config header,
builds the C tests of the chosen directories with plain mpicc, runs every
testlist entry natively (`mpirun -np N --oversubscribe`) and through zipper
for each split X+Y, and writes per-directory tables (Markdown and CSV) with
each difference and its first error line. docs/conformance.md has the full
command and the latest table.

Splits (--splits):
  sample   (default) 1+(n-1), floor(n/2)+ceil(n/2) and (n-1)+1 of each entry's n
  even     floor(n/2)+ceil(n/2) only
  all      every split 1+(n-1) .. (n-1)+1
  X+Y,...  every entry at each of these splits (n = X+Y replaces the testlist's
           process count; the native run uses the same n)
With sample, even or all, entries of one process are listed as not run
(nothing crosses); explicit splits run them at X+Y like every other entry.

Exit status: 0 when every run that passes natively passes through zipper
(apart from the tests the standard lets differ, mpich_suite/allowed.py),
1 when one does not, 2 on usage or build errors, 77 when the suite is absent.
"""

import argparse
import os
import re
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mpich_suite import allowed, build, launch, report, testlist  # noqa: E402

REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_SUITE = os.path.normpath(os.path.join(REPO, "..", "shared", "mpich-testsuite", "test", "mpi"))
ALL_DIRS = ["pt2pt", "coll", "comm", "group", "init", "errhan", "attr", "topo", "datatype", "rma"]
MPI_VERSION = (3, 1)  # Open MPI 4.1


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    p.add_argument("--suite", default=os.environ.get("ZIPPER_MPICH_TESTSUITE", DEFAULT_SUITE),
                   help="the suite's test/mpi directory (default: ../shared/mpich-testsuite/test/mpi "
                        "beside the repository, or $ZIPPER_MPICH_TESTSUITE)")
    p.add_argument("--dirs", default=",".join(ALL_DIRS),
                   help=f"comma-separated suite directories (default {','.join(ALL_DIRS)})")
    p.add_argument("--splits", default="sample", help="sample | even | all | X+Y[,X+Y...] (see below)")
    p.add_argument("--tests", default="", help="regular expression on 'dir/program args' (re.search)")
    p.add_argument("--jobs", type=int, default=2, help="runs (and compilations) at once (default 2)")
    p.add_argument("--timeout", type=int, default=None,
                   help="seconds per run (default: the testlist's timeLimit, else 180)")
    p.add_argument("--out", default="conformance-out", help="output directory (tables, logs)")
    p.add_argument("--work", default=None, help="where the suite is copied and built (default OUT/work)")
    p.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                   help="directory with zipper-run (default build/bin of this repository)")
    p.add_argument("--mpicc", default=os.environ.get("MPICC", "mpicc"))
    p.add_argument("--mpirun", default=os.environ.get("MPIRUN", "mpirun"))
    p.add_argument("--native-only", action="store_true", help="run natively only")
    p.add_argument("--build-only", action="store_true", help="copy and build, run nothing")
    p.add_argument("--list", action="store_true", help="print the planned runs and exit")
    return p.parse_args(argv)


def parse_splits(text):
    if text in ("sample", "all", "even"):
        return text
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\+(\d+)\s*", part)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise SystemExit(f"--splits: '{part}' is not X+Y with X, Y >= 1")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def splits_for(n, mode):
    """[(total, (x, y)), ...] for an entry of n processes."""
    if isinstance(mode, list):
        return [(x + y, (x, y)) for x, y in mode]
    if mode == "all":
        return [(n, (x, n - x)) for x in range(1, n)]
    if mode == "even":
        return [(n, (n // 2, n - n // 2))]
    sample = [(1, n - 1), (n // 2, n - n // 2), (n - 1, 1)]
    return [(n, s) for s in dict.fromkeys(sample)]


def mem_total_gb():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def main(argv):
    a = parse_args(argv)
    t_start = time.monotonic()
    suite = os.path.abspath(a.suite)
    if not os.path.isfile(os.path.join(suite, "util", "mtest.c")):
        print(f"SKIP: the MPICH test suite is not at {suite} (pass --suite DIR or set "
              "$ZIPPER_MPICH_TESTSUITE to its test/mpi directory)")
        return 77
    dirs = [d.strip() for d in a.dirs.split(",") if d.strip()]
    for d in dirs:
        if not os.path.isdir(os.path.join(suite, d)):
            print(f"mpich_conformance: --dirs: no directory '{d}' in {suite}", file=sys.stderr)
            return 2
    mode = parse_splits(a.splits)
    test_rx = re.compile(a.tests) if a.tests else None
    out = os.path.abspath(a.out)
    work = os.path.abspath(a.work or os.path.join(out, "work"))
    zipper_run = os.path.join(os.path.abspath(a.bin), "zipper-run")
    if not (a.native_only or a.build_only or a.list) and not os.access(zipper_run, os.X_OK):
        print(f"mpich_conformance: no zipper-run at {zipper_run} (build zipper or pass --bin DIR)",
              file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)

    # Entries and their runs.
    entries = []
    for d in dirs:
        entries += testlist.parse_testlist(suite, d, warn=lambda m: print("warning:", m))
    mem = mem_total_gb()
    not_run, plan, seen = [], [], set()
    for e in entries:
        top = e.dir.split("/")[0]
        if test_rx and not test_rx.search(e.name):
            continue
        if e.opts.get("strict", "").lower() == "false":
            not_run.append((top, e.name, allowed.NOT_RUN_STRICT))
            continue
        mv = e.opts.get("mpiversion")
        if mv and tuple(int(v) for v in mv.split(".")[:2]) > MPI_VERSION:
            not_run.append((top, e.name, f"needs MPI-{mv} (testlist mpiversion=); Open MPI 4.1 is MPI-3.1"))
            continue
        if e.opts.get("mem") and float(e.opts["mem"]) > 0.8 * mem:
            not_run.append((top, e.name, f"needs {e.opts['mem']} GB of memory; this host has {mem:.0f} GB"))
            continue
        if e.np < 2 and not isinstance(mode, list):
            not_run.append((top, e.name, allowed.NOT_RUN_ONE))
            continue
        for n, split in splits_for(e.np, mode):
            key = (e.dir, e.program, tuple(e.args), tuple(e.env), n, split)
            if key in seen:
                continue
            seen.add(key)
            why = allowed.not_run_at_split(e.name, split)
            if why:
                not_run.append((top, f"{e.name} {split[0]}+{split[1]}", why))
                continue
            plan.append((e, n, split))
    if a.list:
        for e, n, (x, y) in plan:
            print(f"{e.name}  np={n}  {x}+{y}")
        for _, test, why in not_run:
            print(f"{test}  NOT RUN: {why}")
        return 0

    # Build (under a lock: runners sharing a work dir build one at a time).
    lock = build.build_lock(work)
    builder = build.Builder(work, a.mpicc, max(1, a.jobs))
    try:
        build.copy_suite(suite, work, sorted({e.dir for e, _, _ in plan} | set(dirs)))
        build.write_config(work)
        builder.build_util()
    except (OSError, RuntimeError) as ex:
        print(f"mpich_conformance: {ex}", file=sys.stderr)
        return 2
    progs = sorted({(e.dir, e.program) for e, _, _ in plan})
    ams = {d: testlist.parse_makefile_am(os.path.join(work, d)) for d, _ in progs}
    with ThreadPoolExecutor(max(1, a.jobs)) as ex:
        built = dict(zip(progs, ex.map(lambda dp: builder.build_program(dp[0], dp[1], ams[dp[0]]), progs)))
    os.close(lock)
    programs = {}
    for (d, p), (exe, _) in built.items():
        top = d.split("/")[0]
        listed, ok = programs.get(top, (0, 0))
        programs[top] = (listed + 1, ok + (exe is not None))
    runnable = []
    for e, n, split in plan:
        exe, why = built[(e.dir, e.program)]
        top = e.dir.split("/")[0]
        if exe is None:
            if (top, e.name, why) not in not_run:
                not_run.append((top, e.name, why))
        else:
            runnable.append((e, exe, n, split))
    print(f"built {sum(b for _, b in programs.values())} of {len(progs)} programs; "
          f"{len(runnable)} runs planned, {len(not_run)} entries not run", flush=True)
    if a.build_only:
        return 0

    # Run: natively once per (entry, n), through zipper once per split.
    launcher = launch.Launcher(zipper_run, a.mpirun, os.path.join(out, "logs"), work)
    def limit_of(e):
        if a.timeout is not None:
            return a.timeout
        tl = e.opts.get("timeLimit", "")
        return int(tl) if tl.isdigit() else 180
    def log_name(e, n, split):
        args = re.sub(r"[^A-Za-z0-9_.=-]+", "_", " ".join(e.args + e.env))[:80]
        s = "native" if split is None else f"{split[0]}+{split[1]}"
        return os.path.join(e.dir, f"{e.program}{'.' + args if args else ''}.np{n}.{s}.log")
    tasks = {}
    for e, exe, n, split in runnable:
        nk = (e.dir, e.program, tuple(e.args), tuple(e.env), n)
        tasks.setdefault(("native",) + nk, (e, exe, n, None))
        if not a.native_only:
            tasks[("zipper",) + nk + (split,)] = (e, exe, n, split)
    heavy = {k for k, (e, _, _, _) in tasks.items() if float(e.opts.get("mem", "0") or 0) >= 2}
    results, done = {}, [0]
    def one(k):
        e, exe, n, split = tasks[k]
        o = launcher.run(e, exe, n, split, limit_of(e), log_name(e, n, split))
        done[0] += 1
        where = "native" if split is None else f"{split[0]}+{split[1]}"
        print(f"[{done[0]}/{len(tasks)}] {e.name} np={n} {where}: {o.status} {o.seconds:.1f}s"
              + (f"  {o.first_error}" if not o.passed else ""), flush=True)
        return k, o
    light = [k for k in tasks if k not in heavy]
    with ThreadPoolExecutor(max(1, a.jobs)) as ex:
        for f in as_completed([ex.submit(one, k) for k in light]):
            k, o = f.result()
            results[k] = o
    for k in sorted(heavy, key=str):  # memory-heavy runs one at a time
        results[k] = one(k)[1]

    runs = []
    skipped = launch.Outcome(False, "NOT RUN", 0, 0.0, "--native-only", "")
    for e, exe, n, split in runnable:
        nk = (e.dir, e.program, tuple(e.args), tuple(e.env), n)
        why = next((r for rx, r in allowed.ALLOWED.items() if re.search(rx, e.name)), "")
        runs.append(dict(top=e.dir.split("/")[0], test=e.name, n=n, split=f"{split[0]}+{split[1]}",
                         native=results[("native",) + nk],
                         zipper=results.get(("zipper",) + nk + (split,), skipped), allowed=why))
    cmd = "tests/conformance/mpich_conformance.py " + " ".join(shlex.quote(x) for x in argv)
    rows = report.write(out, dirs, runs, not_run, programs, cmd.strip(), time.monotonic() - t_start)
    print()
    print(open(os.path.join(out, "conformance.md")).read().split("\n## ")[0])
    print(f"tables: {out}/conformance.md, {out}/summary.csv, {out}/runs.csv; logs in {out}/logs")
    if a.native_only:
        return 0
    bad = sum(r["differences"] for r in rows.values())
    if bad:
        print(f"FAIL: {bad} run(s) pass natively and fail through zipper")
        return 1
    print("PASS: every run that passes natively passes through zipper")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
