"""zipper-bench placement: block order against zipper-place's rank map.

For each program (the 2-D halo `halo_bench`, and NPB kernels with --npb-src),
on the emulation with shaped links, one rank per emulated node:
  1. one run in block order under `zipper-run --profile` (the matrix);
  2. `zipper-place MATRIX -o MAP` (default link costs), its prediction kept;
  3. --repeat rounds, each running in turn
       block     block order (cluster A runs world ranks 0..x-1),
       placed    the same program under `zipper-run --rank-map MAP`,
       profiled  block order with `--profile` (the profile's overhead);
     each round starting with the next mode, so drift hits all three alike.
Every run must succeed (halo_bench checks every byte; NPB must print
`Verification = SUCCESSFUL`). The crossing traffic of each order is worked out
from the matrix: bytes and messages between ranks that the order puts in
different clusters.
Writes DIR/placement.csv (program,layout,mode,run,time,unit,ok),
DIR/placement-summary.csv (per program: crossing bytes and messages in block
order and under the map, and the medians and spreads of placed/block and
profiled/block) and DIR/placement.png (time of each mode relative to block
order, median and spread).
"""

import json
import os
import re
import statistics
import subprocess
import sys

from zipper_bench_common import emulate_up, tool, usage_error

MODES = ("block", "placed", "profiled")


def add_parser(sub):
    p = sub.add_parser("placement", help="block order vs zipper-place's rank map, shaped")
    p.add_argument("--layout", default="8+8", help="X+Y ranks (one per emulated node)")
    p.add_argument("--rows", type=int, default=2, help="halo_bench grid rows (row-major)")
    p.add_argument("--steps", type=int, default=2000, help="halo_bench timed steps")
    p.add_argument("--npb-src", default="", help="also NPB kernels from this NPB-MPI tree")
    p.add_argument("--kernels", default="cg,mg,is,ep,lu", help="NPB kernels (with --npb-src)")
    p.add_argument("--classes", default="A", help="NPB classes (with --npb-src)")
    p.add_argument("--no-halo", action="store_true", help="NPB kernels only")
    p.add_argument("--repeat", type=int, default=3, help="rounds (the spread)")
    p.add_argument("--rate-a", default="1gbit", help="'' for unshaped")
    p.add_argument("--rate-b", default="1gbit", help="'' for unshaped")
    p.add_argument("--timeout", type=int, default=1800, help="limit per run, seconds")
    p.add_argument("--out-dir", default="bench-placement")
    return p


def crossing(matrix, site_of):
    """(bytes, messages) between ranks that `site_of` puts in different sites."""
    b = m = 0
    for src, dst, nbytes, nmsgs in matrix["traffic"]:
        if site_of[src] != site_of[dst]:
            b += nbytes
            m += nmsgs
    return b, m


def site_of_map(path, world):
    with open(path) as f:
        doc = json.load(f)
    out = [None] * world
    for s, site in enumerate(doc["sites"]):
        for r in site["ranks"]:
            out[r] = s
    return out


def parse_time(kind, text):
    """Seconds (NPB) or µs per step (halo) from the program's output; None if absent."""
    if kind == "halo":
        m = re.search(r"^halo: .*us_per_step=([0-9.]+)", text, re.M)
        return float(m.group(1)) if m else None
    t = re.search(r"Time in seconds\s*=\s*([0-9.]+)", text)
    v = re.search(r"Verification\s*=\s*SUCCESSFUL", text)
    return float(t.group(1)) if t and v else None


def job(x, y, program, timeout, extra):
    cmd = [tool("zipper-run"), "--emulated", "--timeout", str(timeout), "-x", str(x), "-y", str(y),
           "--nodes-a", str(x), "--nodes-b", str(y), "--transparent"] + extra + ["--"] + program
    print("zipper-bench placement: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def programs(args, out):
    """[(name, kind, argv)] for this run; NPB is built with plain mpicc/mpif90."""
    progs = []
    if not args.no_halo:
        progs.append(("halo", "halo", [tool("halo_bench"), "--rows", str(args.rows),
                                       "--steps", str(args.steps)]))
    if args.npb_src:
        import zipper_bench_npb

        kernels = [k.strip().lower() for k in args.kernels.split(",") if k.strip()]
        classes = [c.strip().upper() for c in args.classes.split(",") if c.strip()]
        log = os.path.join(out, "build.log")
        open(log, "w").close()
        exes = zipper_bench_npb.build_tree(os.path.abspath(args.npb_src),
                                           os.path.join(out, "npb-plain"), kernels, classes,
                                           os.environ.get("MPICC", "mpicc"),
                                           os.environ.get("MPIF90", "mpif90"), log)
        for (k, c), exe in sorted(exes.items()):
            progs.append((f"{k}.{c}", "npb", [exe]))
    if not progs:
        usage_error("placement: nothing to run (--no-halo without --npb-src)")
    return progs


def measure(args, out, write_csv):
    m = re.fullmatch(r"(\d+)\+(\d+)", args.layout)
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        usage_error(f"placement: bad --layout '{args.layout}' (want X+Y)")
    x, y = int(m.group(1)), int(m.group(2))
    progs = programs(args, out)
    emulate_up(x, y, args.rate_a, args.rate_b)
    rows, summary, failed = [], [], []
    for name, kind, argv in progs:
        matrix_path = os.path.join(out, f"{name}.matrix.json")
        map_path = os.path.join(out, f"{name}.map")
        rc, text = job(x, y, argv, args.timeout, ["--profile", matrix_path])
        if rc != 0 or parse_time(kind, text) is None:
            sys.stdout.write(text[-4000:])
            failed.append(f"{name}: the profiling run failed (status {rc})")
            continue
        p = subprocess.run([tool("zipper-place"), matrix_path, "-o", map_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout, end="", flush=True)
        if p.returncode != 0:
            failed.append(f"{name}: zipper-place failed (status {p.returncode})")
            continue
        with open(matrix_path) as f:
            matrix = json.load(f)
        world = x + y
        block_sites = [0] * x + [1] * y
        cb, mb = crossing(matrix, block_sites)
        cp, mp = crossing(matrix, site_of_map(map_path, world))
        times = {mode: [] for mode in MODES}
        for r in range(args.repeat):
            # Each round starts with another mode, so that no mode always
            # follows the same one (drift on a busy host).
            for mode in MODES[r % len(MODES):] + MODES[:r % len(MODES)]:
                extra = {"block": [], "placed": ["--rank-map", map_path],
                         "profiled": ["--profile", os.path.join(out, f"{name}.again.json")]}[mode]
                rc, text = job(x, y, argv, args.timeout, extra)
                t = parse_time(kind, text)
                ok = rc == 0 and t is not None
                if not ok:
                    sys.stdout.write(text[-4000:])
                    failed.append(f"{name} {mode} run {r}: status {rc}, no result")
                else:
                    times[mode].append(t)
                rows.append(dict(program=name, layout=args.layout, mode=mode, run=r,
                                 time=t if t is not None else "",
                                 unit="us_per_step" if kind == "halo" else "s",
                                 ok="yes" if ok else "no"))
                write_csv(os.path.join(out, "placement.csv"), rows,
                          ["program", "layout", "mode", "run", "time", "unit", "ok"])
        s = dict(program=name, layout=args.layout, crossing_bytes_block=cb,
                 crossing_msgs_block=mb, crossing_bytes_placed=cp, crossing_msgs_placed=mp,
                 crossing_bytes_ratio=f"{cp / cb:.3f}" if cb else "")
        for mode in ("placed", "profiled"):
            ratios = [a / b for a, b in zip(times[mode], times["block"]) if b]
            if ratios:
                s[f"{mode}_over_block_median"] = f"{statistics.median(ratios):.3f}"
                s[f"{mode}_over_block_min"] = f"{min(ratios):.3f}"
                s[f"{mode}_over_block_max"] = f"{max(ratios):.3f}"
        summary.append(s)
    return summary, failed


SUMMARY_FIELDS = ["program", "layout", "crossing_bytes_block", "crossing_msgs_block",
                  "crossing_bytes_placed", "crossing_msgs_placed", "crossing_bytes_ratio",
                  "placed_over_block_median", "placed_over_block_min", "placed_over_block_max",
                  "profiled_over_block_median", "profiled_over_block_min",
                  "profiled_over_block_max"]


def report(summary, out, pyplot):
    for s in summary:
        print(f"zipper-bench placement: {s['program']} {s['layout']}: crossing "
              f"{s['crossing_bytes_block']} B / {s['crossing_msgs_block']} msgs in block order, "
              f"{s['crossing_bytes_placed']} B / {s['crossing_msgs_placed']} under the map; "
              f"time placed/block {s.get('placed_over_block_median', '-')} "
              f"[{s.get('placed_over_block_min', '-')}, {s.get('placed_over_block_max', '-')}], "
              f"profiled/block {s.get('profiled_over_block_median', '-')} "
              f"[{s.get('profiled_over_block_min', '-')}, {s.get('profiled_over_block_max', '-')}]")
    plt = pyplot()
    if not plt or not summary:
        return
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(summary) + 2), 4))
    for i, mode in enumerate(("placed", "profiled")):
        xs, med, lo, hi = [], [], [], []
        for j, s in enumerate(summary):
            if f"{mode}_over_block_median" not in s or s[f"{mode}_over_block_median"] == "":
                continue
            m = float(s[f"{mode}_over_block_median"])
            xs.append(j + (i - 0.5) * 0.35)
            med.append(m)
            lo.append(m - float(s[f"{mode}_over_block_min"]))
            hi.append(float(s[f"{mode}_over_block_max"]) - m)
        ax.bar(xs, med, width=0.35, yerr=[lo, hi], capsize=3,
               label={"placed": "under zipper-place's map", "profiled": "with --profile"}[mode])
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xticks(range(len(summary)))
    ax.set_xticklabels([s["program"] for s in summary])
    ax.set_ylabel("time / block order (median, min-max)")
    ax.set_title(f"Placement, {summary[0]['layout']}, shaped links")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "placement.png"), dpi=120)
    print(f"zipper-bench placement: wrote {os.path.join(out, 'placement.png')}")


def run(args, tool_, pyplot, write_csv, read_csv):
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.abspath(args.out_dir)
    path = os.path.join(out, "placement-summary.csv")
    failed = []
    if not args.replot:
        summary, failed = measure(args, out, write_csv)
        write_csv(path, summary, SUMMARY_FIELDS)
    summary = read_csv(path)
    report(summary, out, pyplot)
    for f in failed:
        print(f"zipper-bench placement: FAILED {f}", flush=True)
    return 1 if failed else 0
