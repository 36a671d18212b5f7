"""zipper-bench rma: the one-sided targets (docs/performance.md), side by side with their
two-sided baselines on the emulated clusters (default shaped 1/1 Gbit/s),
every program unmodified (plain mpicc) through `zipper-run --transparent`.

Per round, each pair runs back to back, the order alternating between rounds:
  put_latency  osu_put_latency -m 8:8 -s flush      over osu_latency 8 B (1+1)
  get_latency  osu_get_latency -m 8:8 -s flush      over osu_latency 8 B
  fop_latency  osu_fop_latency -s flush             over osu_latency 8 B
  cas_latency  osu_cas_latency -s flush             over osu_latency 8 B
  put_bw       osu_put_bw 4 MiB -s flush            over osu_bw 4 MiB (same -W/-i)
  progress     rma_progress: 8 B Get from a target computing without MPI calls
               over the same Get from an idle target (one run gives both)
  npb_ep, npb_cg  NPB class A EP and CG at 2+2 with the progress mechanism on
               over off (MMPI_RMA_PROGRESS=thread against =off; no windows)
Writes DIR/rma.csv (every run: part, round, order, value, baseline, ratio, host
load), DIR/rma-summary.csv (median, min and max ratio per part, with the
target; latency parts also over a whole round trip, 2 x osu_latency's half
round trip, since a flushed operation cannot cost less) and DIR/rma.png. The benchmarks' own validation (-c) is on for the
RMA runs; a run that fails makes the command exit 1.
"""

import os
import re
import statistics
import subprocess
import sys

import zipper_bench_npb

PARTS = ("put_latency", "get_latency", "fop_latency", "cas_latency", "put_bw", "progress",
         "npb_ep", "npb_cg")
# (target ratio, "le" or "ge") from the one-sided targets (docs/performance.md).
TARGETS = {"put_latency": (1.2, "le"), "get_latency": (1.2, "le"), "fop_latency": (1.2, "le"),
           "cas_latency": (1.2, "le"), "put_bw": (0.95, "ge"), "progress": (2.0, "le"),
           "npb_ep": (1.02, "le"), "npb_cg": (1.02, "le")}
UNITS = {"put_bw": "MB/s", "progress": "us", "npb_ep": "s", "npb_cg": "s"}


def add_parser(sub):
    r = sub.add_parser("rma", help="one-sided: RMA vs two-sided, progress, NPB cost")
    r.add_argument("--parts", default=",".join(PARTS), help="of " + ",".join(PARTS))
    r.add_argument("--rounds", type=int, default=3, help="alternating rounds (spread)")
    r.add_argument("--rate-a", default="1gbit", help="cluster A's link rate ('' unshaped)")
    r.add_argument("--rate-b", default="1gbit", help="cluster B's link rate ('' unshaped)")
    r.add_argument("--lat-iters", type=int, default=2000, help="latency: timed iterations")
    r.add_argument("--bw-iters", type=int, default=4, help="put_bw/osu_bw: timed iterations")
    r.add_argument("--bw-window", type=int, default=16, help="put_bw/osu_bw: -W")
    r.add_argument("--progress-seconds", type=float, default=2.0,
                   help="progress: the target's compute time per phase")
    r.add_argument("--progress-env", default="MMPI_RMA_PROGRESS",
                   help="npb: the variable that turns the progress mechanism on or off")
    r.add_argument("--progress-on", default="thread", help="npb: its value for on")
    r.add_argument("--progress-off", default="off", help="npb: its value for off")
    r.add_argument("--npb-src", default="", help="an unmodified NPB3.4-MPI tree (npb parts)")
    r.add_argument("--timeout", type=int, default=600, help="limit per run, seconds")
    r.add_argument("--out-dir", default="bench-rma")
    return r


def zrun(tool, x, y, prog, timeout, env=None, cwd=None):
    cmd = [tool("zipper-run"), "--emulated", "-x", str(x), "-y", str(y), "--nodes-a", str(x),
           "--nodes-b", str(y), "--timeout", str(timeout), "--transparent", "--"] + prog
    print("zipper-bench rma: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, **(env or {})), cwd=cwd)
    return p.returncode, p.stdout


def osu_value(text):
    """The single row's value of an OSU table (one size)."""
    rows = re.findall(r"^\d+\s+([0-9.]+)$", text, re.M)
    return float(rows[-1]) if rows else None


def one(tool, args, part, which, npb):
    """Runs one side of a pair; returns (value, output)."""
    lat = ["-m", "8:8", "-i", str(args.lat_iters), "-x", str(max(args.lat_iters // 10, 10))]
    bw = ["-m", "4194304:4194304", "-i", str(args.bw_iters), "-x", "1", "-W", str(args.bw_window)]
    if part == "progress":
        rc, out = zrun(tool, 1, 1, [tool("rma_progress"), "-t", str(args.progress_seconds),
                                    "-r", "1"], args.timeout)
        m = re.search(r"idle median_us ([0-9.]+), busy median_us ([0-9.]+)", out)
        if rc != 0 or not m:
            return None, out
        return float(m.group(2 if which == "rma" else 1)), out
    if part.startswith("npb_"):
        env = {args.progress_env: args.progress_on if which == "rma" else args.progress_off}
        rc, out = zrun(tool, 2, 2, [npb[part]], args.timeout, env=env, cwd=args.out_dir)
        t, _, ok = zipper_bench_npb.parse_npb(out)
        return (t if rc == 0 and ok else None), out
    if which == "base":
        prog = [tool("osu_bw_native")] + bw if part == "put_bw" else [tool("osu_latency_native")] + lat
    else:
        prog = [tool(f"osu_{part}"), "-s", "flush", "-c"] + (bw if part == "put_bw" else lat)
        if part in ("fop_latency", "cas_latency"):
            prog = [a for a in prog if a not in ("-m", "8:8")]
    rc, out = zrun(tool, 1, 1, prog, args.timeout)
    return (osu_value(out) if rc == 0 else None), out


def measure(args, tool, write_csv, parts, csv_path):
    npb = {}
    if any(p.startswith("npb_") for p in parts):
        if not args.npb_src:
            sys.exit("zipper-bench rma: the npb parts need --npb-src DIR (NPB is not in Debian)")
        log = os.path.join(args.out_dir, "build.log")
        open(log, "w").close()
        kernels = [p[4:] for p in parts if p.startswith("npb_")]
        built = zipper_bench_npb.build_tree(os.path.abspath(args.npb_src),
                                            os.path.join(args.out_dir, "npb-plain"), kernels,
                                            ["A"], os.environ.get("MPICC", "mpicc"),
                                            os.environ.get("MPIF90", "mpif90"), log)
        npb = {f"npb_{k}": built[(k, "A")] for k in kernels}
    up = [tool("zipper-emulate"), "up", "--nodes-a", "2", "--nodes-b", "2"]
    up += ["--rate-a", args.rate_a] if args.rate_a else []
    up += ["--rate-b", args.rate_b] if args.rate_b else []
    print("zipper-bench rma: running", " ".join(up), flush=True)
    if subprocess.call(up) != 0:
        sys.exit("zipper-bench rma: zipper-emulate up failed")
    rows, failed = [], []
    fields = ["part", "round", "order", "value", "baseline", "ratio", "unit", "load1"]
    for r in range(args.rounds):
        for part in parts:
            order = ("base", "rma") if r % 2 == 0 else ("rma", "base")
            if part == "progress":
                order = ("rma",)  # one run measures both phases, alternating inside
            got = {}
            for which in order:
                v, out = one(tool, args, part, which, npb)
                if v is None:
                    sys.stdout.write(out[-4000:])
                    failed.append(f"{part} {which} round {r}")
                got[which] = v
            if part == "progress" and got.get("rma") is not None:
                got["base"] = one_progress_idle(out)
            row = dict(part=part, round=r, order="/".join(order), value=got.get("rma"),
                       baseline=got.get("base"), unit=UNITS.get(part, "us"),
                       load1=f"{os.getloadavg()[0]:.2f}")
            if row["value"] and row["baseline"]:
                row["ratio"] = f"{row['value'] / row['baseline']:.4f}"
            rows.append(row)
            write_csv(csv_path, rows, fields)  # partial results survive a crash
            print(f"zipper-bench rma: {part} round {r}: {row}", flush=True)
    return failed


def one_progress_idle(out):
    m = re.search(r"idle median_us ([0-9.]+)", out)
    return float(m.group(1)) if m else None


def run(args, tool, pyplot, write_csv, read_csv):
    os.makedirs(args.out_dir, exist_ok=True)
    args.out_dir = os.path.abspath(args.out_dir)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS]
    if bad or args.rounds < 1:
        sys.exit(f"zipper-bench rma: unknown part {', '.join(bad)} (of {','.join(PARTS)}), "
                 "or --rounds < 1")
    csv_path = os.path.join(args.out_dir, "rma.csv")
    failed = [] if args.replot else measure(args, tool, write_csv, parts, csv_path)
    report(read_csv(csv_path), args.out_dir, write_csv, pyplot, args)
    if failed:
        sys.exit("zipper-bench rma: FAILED runs: " + "; ".join(failed))


def report(rows, out, write_csv, pyplot, args):
    summary = []
    print(f"\n{'part':12} {'value (median)':>16} {'baseline':>12} {'ratio median':>13} "
          f"{'min':>7} {'max':>7} {'target':>8}")
    for part in PARTS:
        rs = [r for r in rows if r["part"] == part and r.get("ratio")]
        if not rs:
            continue
        ratios = [float(r["ratio"]) for r in rs]
        vals = [float(r["value"]) for r in rs]
        base = [float(r["baseline"]) for r in rs]
        t, how = TARGETS[part]
        med = statistics.median(ratios)
        ok = med <= t if how == "le" else med >= t
        # osu_latency reports half a round trip; an RMA operation completed by
        # a flush costs a whole one (foMPI's model), so also against 2x.
        rtt = [v / (2 * b) for v, b in zip(vals, base)] if part.endswith("_latency") else []
        line = dict(part=part, runs=len(rs), value_median=f"{statistics.median(vals):.2f}",
                    baseline_median=f"{statistics.median(base):.2f}", unit=rs[0]["unit"],
                    ratio_median=f"{med:.3f}", ratio_min=f"{min(ratios):.3f}",
                    ratio_max=f"{max(ratios):.3f}", target=f"{'<=' if how == 'le' else '>='} {t}",
                    met="yes" if ok else "no",
                    over_round_trip=f"{statistics.median(rtt):.3f}" if rtt else "",
                    load1=f"{min(float(r['load1']) for r in rs):.1f}-"
                          f"{max(float(r['load1']) for r in rs):.1f}")
        summary.append(line)
        print(f"{part:12} {line['value_median']:>11} {line['unit']:>4} "
              f"{line['baseline_median']:>12} {line['ratio_median']:>13} {line['ratio_min']:>7} "
              f"{line['ratio_max']:>7} {line['target']:>8} {'met' if ok else 'NOT met'}"
              + (f" (over a round trip {line['over_round_trip']})" if rtt else ""))
    path = os.path.join(out, "rma-summary.csv")
    write_csv(path, summary, ["part", "runs", "value_median", "baseline_median", "unit",
                              "ratio_median", "ratio_min", "ratio_max", "target", "met",
                              "over_round_trip", "load1"])
    print(f"zipper-bench rma: wrote {os.path.join(out, 'rma.csv')} and {path}")
    plt = pyplot()
    if not plt or not summary:
        return
    fig, ax = plt.subplots(figsize=(1.1 * len(summary) + 2.5, 3.8))
    xs = range(len(summary))
    med = [float(s["ratio_median"]) for s in summary]
    lo = [m - float(s["ratio_min"]) for m, s in zip(med, summary)]
    hi = [float(s["ratio_max"]) - m for m, s in zip(med, summary)]
    colours = ["C2" if s["met"] == "yes" else "C3" for s in summary]
    ax.bar(xs, med, yerr=[lo, hi], color=colours, capsize=4)
    for i, s in enumerate(summary):
        t = TARGETS[s["part"]][0]
        ax.hlines(t, i - 0.4, i + 0.4, colors="k", linestyles="--")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([s["part"] for s in summary], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("ratio (RMA / two-sided; busy / idle; on / off)")
    ax.set_yscale("log")
    rates = f"A {args.rate_a or 'unshaped'}, B {args.rate_b or 'unshaped'}"
    ax.set_title(f"RMA targets ({rates}); median, bars min-max, dashes: target", fontsize=9)
    fig.tight_layout()
    png = os.path.join(out, "rma.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench rma: wrote {png}")
