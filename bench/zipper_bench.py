#!/usr/bin/python3
"""zipper-bench: side-by-side benchmark reports with CSV and PNG plots.

  zipper-bench p2p [--links shaped,unshaped] [--bench latency,bw,bibw]
                   [--modes native_a,native_b,forwarded[,forwarded_splice]] [-m [MIN:]MAX]
                   [-i N] [--warmup N] [-W N] [--rate-a R --rate-b R]
                   [--local | --hostfile-a F --hostfile-b F --forwarder-a ADDR
                    --forwarder-b ADDR] [--link tcp|verbs] [--mpirun-args ARGS]
                   [--perftest SERVER_DEV,CLIENT_DEV,SERVER_IP [--perftest-gid N]]
                   [--repeat N] [--out-dir DIR]
      OSU-style point-to-point three ways, all launched by zipper-run (its
      one zipperd lifecycle): native_a = osu_<bench>_native, 2 ranks in
      cluster A (zipper-run --standalone -y 0); native_b likewise in B (-x 0);
      forwarded = osu_<bench> (libmmpi), rank 0 in A, rank 1 in B, through
      zipperd; forwarded_splice (not by default) likewise with zipperd's
      --splice true, so zipperd moves payloads by splice() instead of
      copying. Emulated (default): once per --links setting (shaped: A
      --rate-a, B --rate-b, default 1gbit / 4gbit; unshaped: no TBF).
      --local: everything on this host; --hostfile-a/-b with
      --forwarder-a/-b: real clusters, zipperd already serving (--no-zipperd).
      --perftest adds ib_send_lat / ib_write_bw between two local RDMA devices
      as the one-hop native-verbs reference (docs/verbs.md). Writes DIR/p2p.csv
      with columns links,benchmark,size_bytes,native_a,native_b,forwarded,
      fwd_over_native_a,fwd_over_native_b,fwd_over_sum_native,perftest,
      fwd_over_perftest, forwarded_splice, splice_over_native_a, and
      cores_busy_<mode> (cores this host kept busy during that mode's job,
      from /proc/stat: all of them means CPU-bound) (latency in us, bw/bibw
      in MB/s = 10^6 B/s;
      fwd_over_sum_native for latency only), prints the forwarded/native
      ratios and draws DIR/p2p-<bench>.png (forwarded vs native per size).
      --repeat N runs every job N times: the CSV holds the median and the
      <mode>_min / <mode>_max of the N runs, the plots draw the median and
      shade the spread. Latency ratio plots mark 1.0 (as fast as native)
      and 2.0 (store-and-forward: two native hops one after the other).
      Runs are labelled by where they ran: shaped, unshaped (emulated),
      local (--local) or real (--hostfile-a/-b).

  zipper-bench coll [--layout X+Y] [--bench LIST] [--sizes MIN:MAX]
                    [--rate-a R --rate-b R] [--out-dir DIR]
      Collective latency (osu_<bench>): native Open MPI with X+Y ranks in
      cluster A (zipper-run --standalone) against libmmpi across the clusters
      through zipperd (zipper-run), automatic choice and every algorithm and
      n the library lists (zipper-tune --list-algorithms: never a copy), on
      links shaped by zipper-emulate. zipper-tune --measure-only measures the
      links first and gives the model's prediction per algorithm. Writes
      DIR/coll.csv and DIR/coll.json, draws DIR/coll-<bench>.png (measured
      points, the model's prediction as lines, native for reference; with
      one size, bars per algorithm, measured beside the model).

  zipper-bench tune [--layout X+Y] [--rate-a R --rate-b R] [--quick]
                    [--out-dir DIR] [-- ZIPPER-TUNE-ARGS]
      zipper-tune in one job through zipper-run on the emulation with one
      rank per node and shaped links (docs/tuning.md): writes
      DIR/tuning.toml and DIR/tune.json, draws DIR/tune-model.png (predicted
      against measured time of every measured candidate) and
      DIR/tune-<collective>.png (tuned vs built-in rules per size).

  zipper-bench npb --npb-src DIR [--kernels ep,cg,mg,is,lu] [--classes S]
                   [--layouts 2+2] [--modes native_a,native_b,zipper]
                   [--ported-src DIR] [--repeat N] [--rate-a R --rate-b R]
                   [--out-dir DIR]
      The NAS Parallel Benchmarks comparison (docs/performance.md): builds the
      unmodified NPB-MPI tree in a copy with plain mpicc/mpif90, runs native
      in A, native in B (X+Y ranks each) and X+Y through zipperd under
      zipper-run --transparent; every run must verify. Writes DIR/npb.csv,
      DIR/npb-ratios.csv and DIR/npb.png (time against processes, one panel
      per kernel).

  zipper-bench stripe [--zippers 1,2,4] [--pairs 1,4] [--rate-zipper 1gbit]
                      [--size B] [--messages N] [--repeat N] [--out-dir DIR]
  zipper-bench failover [--signal KILL|STOP] [--kill-at S] [--repeat N]
                      [--rate-zipper 1gbit] [--out-dir DIR]
      Several bridge nodes (zipper_bench_rails.py): bandwidth through k
      forwarders against k=1, and a verified stream while one of two zipperd
      is killed or stopped (total time and time to traffic flowing again).

  zipper-bench rma [--parts ...] [--rounds 3] [--rate-a R --rate-b R]
                   [--npb-src DIR] [--progress-env VAR] [--out-dir DIR]
      One-sided communication, issue 26's targets (zipper_bench_rma.py):
      osu_put/get/fop/cas_latency against osu_latency, osu_put_bw against
      osu_bw, a Get from a computing target against an idle one, NPB EP and CG
      with the progress mechanism on against off; alternating rounds, shaped
      1/1 Gbit/s by default. Writes DIR/rma.csv, DIR/rma-summary.csv and
      DIR/rma.png.

Units: sizes in bytes, bandwidth in MB/s (10^6 B/s), latency in us.
Exit status: 0 done, 1 a run failed (its output is shown; the CSV and plots
of the other runs are still written), 2 usage error.
Needs root (network namespaces) like the drivers it runs; the plots need
python3-matplotlib (without it, only the CSV and the table are written).
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

import zipper_bench_npb  # beside this file (sys.path[0] is its real directory)
import zipper_bench_rails
import zipper_bench_rma

BIN = os.path.dirname(os.path.realpath(__file__))  # installed: libexec/zipper, through bin's link
VERSION = "@PROJECT_VERSION@"  # set by CMake when built; the source tree says so


def usage_error(msg):
    print(f"zipper-bench: {msg}", file=sys.stderr)
    sys.exit(2)


def run_driver(cmd):
    print("zipper-bench: running", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if rc != 0:
        sys.exit(f"zipper-bench: {cmd[0]} failed with status {rc}")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        print("zipper-bench: python3-matplotlib missing: no plots", file=sys.stderr)
        return None


def size_label(b):
    b = int(b)
    if b >= 1 << 20:
        return f"{b >> 20}M"
    if b >= 1 << 10:
        return f"{b >> 10}K"
    return str(b)


def mode_args(args):
    """zipper-run's options for where the job runs (p2p --local / --hostfile-a ...)."""
    if args.local:
        out = ["--local"]
        if args.forwarder_a:
            out += ["--forwarder-a", with_scheme(args.forwarder_a, args.link),
                    "--forwarder-b", with_scheme(args.forwarder_b or args.forwarder_a, args.link)]
        return out
    if args.hostfile_a:
        return ["--hostfile-a", args.hostfile_a, "--hostfile-b", args.hostfile_b,
                "--forwarder-a", with_scheme(args.forwarder_a, args.link),
                "--forwarder-b", with_scheme(args.forwarder_b, args.link), "--no-zipperd"]
    return ["--emulated", "--nodes-a", "2", "--nodes-b", "2"]


def with_scheme(addr, link):
    return addr if addr.startswith(("tcp:", "verbs:")) else f"{link}:{addr}"


def launch(where, x, y, program, standalone=False, timeout=1800, mpirun_args=""):
    """One job through zipper-run; returns (status, stdout)."""
    cmd = [tool("zipper-run"), "-x", str(x), "-y", str(y), "--timeout", str(timeout)] + where
    cmd += ["--mpirun-args", mpirun_args] if mpirun_args else []
    if standalone:
        # zipperd plays no part: drop the options that only concern it.
        cmd = [a for a in cmd if a != "--no-zipperd"] + ["--standalone"]
    cmd += ["--"] + program
    print("zipper-bench: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    return p.returncode, p.stdout


def osu_rows(text):
    """{size: value} from an OSU point-to-point table."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and re.fullmatch(r"\d+", f[0]) and re.fullmatch(r"[0-9.]+", f[1]):
            out[int(f[0])] = float(f[1])
    return out


def sweep_sizes(spec):
    """The sizes osu_p2p.h walks for -m spec (default 1:4194304; 0, then doubling)."""
    lo, hi = 1, 4194304
    if spec:
        if ":" in spec:
            a, b = spec.split(":", 1)
            lo, hi = int(a) if a else lo, int(b) if b else hi
        else:
            hi = int(spec)
    s, out = lo, []
    while s <= hi:
        out.append(s)
        s = s * 2 if s else 1
    return out


def perftest_one(args, bench, size):
    """perftest between two local RDMA devices (one hop): latency us or MB/s (10^6 B)."""
    server_dev, client_dev, server_ip = args.perftest.split(",")
    win = args.window or 64
    n = args.iterations or ((1000 if size > 8192 else 10000) if bench == "latency"
                            else (20 if size > 8192 else 100))
    n = max(5, n if bench == "latency" else n * win)  # perftest's minimum is 5
    tool_name = "ib_send_lat" if bench == "latency" else "ib_write_bw"
    opts = (["-b"] if bench == "bibw" else []) + ["-F", "-p", "18515", "-s", str(size), "-n", str(n)]
    opts += ["-x", str(args.perftest_gid)] if args.perftest_gid is not None else []
    srv = subprocess.Popen([tool_name, "-d", server_dev] + opts, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        # The client must not connect before the server listens.
        for _ in range(300):
            ss = subprocess.run(["ss", "-Hltn", "sport = :18515"], stdout=subprocess.PIPE, text=True)
            if ss.stdout.strip() or srv.poll() is not None:
                break
            time.sleep(0.1)
        cli = subprocess.run([tool_name, "-d", client_dev] + opts + [server_ip],
                             stdout=subprocess.PIPE, text=True, timeout=args.timeout)
        srv.wait(timeout=30)
    except subprocess.TimeoutExpired:
        print(f"zipper-bench: perftest {bench} {size} B timed out", file=sys.stderr)
        return None
    finally:
        if srv.poll() is None:
            srv.terminate()
            srv.wait()
    value, col, head = None, None, False
    for line in cli.stdout.splitlines():
        f = line.split()
        if bench == "latency":
            if "t_avg[usec]" in line:
                col = next(i for i, w in enumerate(f) if w.startswith("t_avg"))
            elif col is not None and f and f[0].isdigit() and len(f) > col:
                value = float(f[col])
        else:
            if "BW average[MB/sec]" in line:
                head = True
            elif head and f and f[0].isdigit() and len(f) >= 4:
                value = float(f[3]) * 1048576 / 1e6
    return value


def busy_cpu_seconds():
    """CPU-seconds spent busy (not idle or waiting for I/O) on this host so far."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def p2p_measure(args, links, path):
    """Measures one link setting; writes the per-setting CSV at path."""
    benches = args.bench.split(",")
    modes = args.modes.split(",")
    where = mode_args(args) + [f"--zipperd-arg={a}" for a in args.zipperd_arg]
    if not args.local and not args.hostfile_a:
        emulate_up(2, 2, args.rate_a if links == "shaped" else "",
                   args.rate_b if links == "shaped" else "")
    opts = (["-m", args.message_size] if args.message_size else []) + \
           (["-i", str(args.iterations)] if args.iterations else []) + \
           (["-x", str(args.warmup)] if args.warmup else [])
    values, failed, cores = {}, [], {}
    for b in benches:
        bopts = opts + (["-W", str(args.window)] if args.window and b != "latency" else [])
        runs = {"native_a": (2, 0, f"osu_{b}_native", True),
                "native_b": (0, 2, f"osu_{b}_native", True),
                "forwarded": (1, 1, f"osu_{b}", False),
                "forwarded_splice": (1, 1, f"osu_{b}", False)}
        for m in modes:
            x, y, prog, standalone = runs[m]
            # forwarded_splice: zipperd with --splice true (payloads moved by
            # splice(), not copied), beside the default copying relay.
            extra = ["--zipperd-arg", "--splice", "--zipperd-arg", "true"] \
                if m == "forwarded_splice" else []
            busy = []
            for n in range(args.repeat):
                cpu0, t0 = busy_cpu_seconds(), time.monotonic()
                rc, text = launch(where + extra, x, y, [tool(prog)] + bopts, standalone,
                                  args.timeout, args.mpirun_args)
                # Whole job, launch included: how many of the host's cores the
                # mode kept busy (all of them = CPU-bound, not link-bound).
                busy.append((busy_cpu_seconds() - cpu0) / (time.monotonic() - t0))
                if rc != 0:
                    sys.stdout.write(text)
                    failed.append(f"{b}.{m}" + (f".run{n + 1}" if args.repeat > 1 else ""))
                for size, v in osu_rows(text).items():
                    values.setdefault((b, size, m), []).append(v)
            cores[(b, m)] = statistics.median(busy)
        if args.perftest:
            for size in sweep_sizes(args.message_size):
                if size == 0:
                    continue
                v = perftest_one(args, b, size)
                if v is None:
                    failed.append(f"{b}.perftest.{size}")
                else:
                    values[(b, size, "perftest")] = [v]
    def ratio(a, c):
        return f"{a / c:.3f}" if a is not None and c else ""
    rows = []
    for b, size in sorted({(k[0], k[1]) for k in values}, key=lambda k: (benches.index(k[0]), k[1])):
        runs_of = {m: values.get((b, size, m)) for m in RUN_MODES + ("perftest",)}
        # Medians of the --repeat runs; the spread goes to <mode>_min/_max.
        v = {m: statistics.median(r) if r else None for m, r in runs_of.items()}
        f = v["forwarded"]
        rows.append({"benchmark": b, "size_bytes": size,
                     **{m: ("" if v[m] is None else v[m]) for m in v},
                     **{f"{m}_{k}": (fn(runs_of[m]) if runs_of[m] else "")
                        for m in RUN_MODES for k, fn in (("min", min), ("max", max))},
                     "fwd_over_native_a": ratio(f, v["native_a"]),
                     "fwd_over_native_b": ratio(f, v["native_b"]),
                     "fwd_over_sum_native": ratio(f, (v["native_a"] or 0) + (v["native_b"] or 0))
                     if b == "latency" and v["native_a"] and v["native_b"] else "",
                     "fwd_over_perftest": ratio(f, v["perftest"]),
                     "splice_over_native_a": ratio(v["forwarded_splice"], v["native_a"]),
                     **{f"cores_busy_{m}": f"{cores[(b, m)]:.2f}" if (b, m) in cores else ""
                        for m in ("native_a", "native_b", "forwarded", "forwarded_splice")}})
    write_csv(path, rows, P2P_FIELDS)
    if failed:
        print("zipper-bench: FAILED runs: " + ", ".join(failed), file=sys.stderr)
    return not failed


RUN_MODES = ("native_a", "native_b", "forwarded", "forwarded_splice")
P2P_FIELDS = ["benchmark", "size_bytes", "native_a", "native_b", "forwarded", "fwd_over_native_a",
              "fwd_over_native_b", "fwd_over_sum_native", "perftest", "fwd_over_perftest",
              "forwarded_splice", "splice_over_native_a", "cores_busy_native_a",
              "cores_busy_native_b", "cores_busy_forwarded", "cores_busy_forwarded_splice"] + \
    [f"{m}_{k}" for m in RUN_MODES for k in ("min", "max")]


def p2p(args, extra):
    for b in args.bench.split(","):
        if b not in ("latency", "bw", "bibw"):
            usage_error(f"--bench takes latency, bw and bibw, not '{b}'")
    for m in args.modes.split(","):
        if m not in ("native_a", "native_b", "forwarded", "forwarded_splice"):
            usage_error("--modes takes native_a, native_b, forwarded and "
                    f"forwarded_splice, not '{m}'")
    real = [args.hostfile_a, args.hostfile_b, args.forwarder_a, args.forwarder_b]
    if any(real[:2]) and not all(real):
        usage_error("real clusters need --hostfile-a, --hostfile-b, --forwarder-a "
                    "and --forwarder-b")
    if args.local and args.hostfile_a:
        usage_error("--local and --hostfile-a/-b are exclusive")
    if args.perftest and len(args.perftest.split(",")) != 3:
        usage_error(f"--perftest wants SERVER_DEV,CLIENT_DEV,SERVER_IP, got '{args.perftest}'")
    os.makedirs(args.out_dir, exist_ok=True)
    merged, ok = [], True
    if args.repeat < 1:
        usage_error(f"--repeat must be at least 1, got {args.repeat}")
    # Named by where the runs happen: a --local run is not a real cluster.
    settings = (["local"] if args.local else ["real"] if args.hostfile_a
                else args.links.split(","))
    for links in settings:
        if links not in ("shaped", "unshaped", "real", "local"):
            usage_error(f"--links takes shaped and unshaped, not '{links}'")
        out = os.path.join(args.out_dir, f"p2p-{links}.csv")
        if not args.replot:
            ok &= p2p_measure(args, links, out)
        merged += [dict(r, links=links) for r in read_csv(out)]
    fields = ["links"] + P2P_FIELDS
    path = os.path.join(args.out_dir, "p2p.csv")
    write_csv(path, merged, fields)
    print(f"\n{'bench':8} {'size':>9} " + " ".join(f"{l + ' fwd/A':>16}" for l in settings))
    keys = sorted({(r["benchmark"], int(r["size_bytes"])) for r in merged})
    for bench, size in keys:
        cells = []
        for links in settings:
            r = next((r for r in merged if r["links"] == links and r["benchmark"] == bench
                      and r["size_bytes"] == str(size)), None)
            cells.append(f"{r['fwd_over_native_a'] if r else '':>16}")
        print(f"{bench:8} {size:>9} " + " ".join(cells))
    print(f"zipper-bench: wrote {path}")
    plt = pyplot()
    if plt:
        for bench, unit in (("bw", "MB/s"), ("bibw", "MB/s"), ("latency", "us")):
            rows = [r for r in merged if r["benchmark"] == bench]
            if not rows:
                continue
            fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                              gridspec_kw={"height_ratios": [3, 2]})
            for links, style in (("shaped", "-"), ("unshaped", "--"), ("real", "-"),
                                 ("local", "-")):
                sel = sorted((r for r in rows if r["links"] == links),
                             key=lambda r: int(r["size_bytes"]))
                if not sel:
                    continue
                for col, colour in (("native_a", "tab:blue"), ("native_b", "tab:green"),
                                    ("forwarded", "tab:red"), ("forwarded_splice", "tab:orange"),
                                    ("perftest", "tab:grey")):
                    # .get: CSVs from before a column existed still plot.
                    pts = [(max(int(r["size_bytes"]), 1), float(r[col])) for r in sel
                           if r.get(col)]
                    if pts:
                        top.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colour,
                                 marker=".", label=f"{col} ({links})")
                    # The spread of --repeat runs: min to max around the median.
                    spread = [(max(int(r["size_bytes"]), 1), float(r[f"{col}_min"]),
                               float(r[f"{col}_max"])) for r in sel
                              if r.get(f"{col}_min") and r.get(f"{col}_max")]
                    if spread and any(lo != hi for _, lo, hi in spread):
                        top.fill_between([p[0] for p in spread], [p[1] for p in spread],
                                         [p[2] for p in spread], color=colour, alpha=0.2,
                                         linewidth=0)
                pts = [(max(int(r["size_bytes"]), 1), float(r["fwd_over_native_a"])) for r in sel
                       if r.get("fwd_over_native_a")]
                bottom.plot([p[0] for p in pts], [p[1] for p in pts], style, color="tab:red",
                            marker=".", label=f"forwarded / native A ({links})")
            top.set_xscale("log", base=2)
            top.set_yscale("log")
            top.set_ylabel(unit)
            spread = any(r.get(f"{m}_min") != r.get(f"{m}_max") for r in rows for m in RUN_MODES)
            runs = ",\nmedian of repeated runs (shaded: min to max)" if spread else ""
            top.set_title(f"osu_{bench}: native inside a cluster vs forwarded through zipperd{runs}",
                          fontsize=9)
            top.legend(fontsize=7)
            bottom.axhline(1.0, color="grey", linewidth=0.8, label="1.0: as fast as native")
            if bench == "latency":
                bottom.axhline(2.0, color="grey", linewidth=0.8, linestyle=":",
                               label="2.0: store-and-forward (two native hops)")
            bottom.set_xlabel("message size (bytes)")
            bottom.set_ylabel("ratio")
            bottom.legend(fontsize=7)
            png = os.path.join(args.out_dir, f"p2p-{bench}.png")
            fig.tight_layout()
            fig.savefig(png, dpi=110)
            plt.close(fig)
            print(f"zipper-bench: wrote {png}")
    if not ok:
        sys.exit(1)

def tool(name):
    return os.path.join(BIN, name)


def emulate_up(nodes_a, nodes_b, rate_a, rate_b):
    """The emulated clusters with shaped links (zipper-emulate; idempotent)."""
    cmd = [tool("zipper-emulate"), "up", "--nodes-a", str(nodes_a), "--nodes-b", str(nodes_b)]
    if rate_a:
        cmd += ["--rate-a", rate_a]
    if rate_b:
        cmd += ["--rate-b", rate_b]
    run_driver(cmd)


def zipper_run(x, y, nodes_a, nodes_b, program, standalone=False, timeout=900):
    """One job on the emulation through launch(); exits on failure, returns stdout."""
    where = ["--emulated", "--nodes-a", str(nodes_a), "--nodes-b", str(nodes_b)]
    rc, text = launch(where, x, y, program, standalone, timeout)
    if rc != 0:
        sys.stdout.write(text)
        sys.exit(f"zipper-bench: zipper-run failed with status {rc}")
    return text


def osu_tables(text):
    """{ranks: {size: avg_us}} from OSU output (one table per '# zipper:' header)."""
    out, ranks = {}, None
    for line in text.splitlines():
        m = re.match(r"# zipper: .*?(\d+) ranks", line)
        if m:
            ranks = int(m.group(1))
            out.setdefault(ranks, {})
            continue
        f = line.split()
        if ranks is not None and len(f) >= 2 and re.fullmatch(r"\d+", f[0]):
            out[ranks][int(f[0])] = float(f[1])
        elif ranks is not None and len(f) == 1 and re.fullmatch(r"[0-9.]+", f[0]):
            out[ranks][0] = float(f[0])  # barrier: no size column
    return out


def library_algorithms(benches):
    """The library's algorithm table (MMPIX_Coll_algorithm through zipper-tune)."""
    p = subprocess.run([tool("zipper-tune"), "--list-algorithms", "--collectives",
                        ",".join(benches)], stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(p.stdout)


def coll(args, extra):
    os.makedirs(args.out_dir, exist_ok=True)
    x, y = (int(v) for v in args.layout.split("+"))
    benches = args.bench.split(",")
    raw = os.path.join(args.out_dir, "coll.json")
    if not args.replot:
        algos = library_algorithms(benches)
        emulate_up(max(x + y, x), y, args.rate_a, args.rate_b)
        lo, hi = (args.sizes.split(":") + [""])[:2] if ":" in args.sizes else ("1", args.sizes)
        model = os.path.join(args.out_dir, "model.json")
        zipper_run(x, y, x, y, [tool("zipper-tune"), "--measure-only", "--quick",
                                "--collectives", ",".join(benches), "--max-bytes", hi,
                                "--max-block", hi, "--report", model])
        with open(model) as f:
            predictions = json.load(f)["predictions"]
        rows = []
        for b in benches:
            sizes = [] if b == "barrier" else ["-m", args.sizes]
            text = zipper_run(x + y, 0, max(x + y, x), y, [tool(f"osu_{b}_native")] + sizes + extra,
                              standalone=True)
            for size, us in sorted(osu_tables(text).get(x + y, {}).items()):
                rows.append(dict(bench=b, algorithm="native", n="", size=size, avg_us=us,
                                 predicted_us=""))
            configs = [("auto", 0)]
            for a in algos[b]:
                ns = range(1, min(x, y) + 1) if a["takes_senders"] else [0]
                configs += [(a["name"], n) for n in ns]
            for alg, n in configs:
                prog = [tool(f"osu_{b}")] + sizes + ["--algorithm", alg]
                prog += ["--inter-senders", str(n)] if n else []
                text = zipper_run(x, y, x, y, prog + extra)
                for size, us in sorted(osu_tables(text).get(x + y, {}).items()):
                    pred = next((p["predicted_us"] for p in predictions
                                 if p["collective"] == b and p["algorithm"] == alg
                                 and p["n"] == n and p["bytes"] == size), "")
                    rows.append(dict(bench=b, algorithm=alg, n=n or "", size=size, avg_us=us,
                                     predicted_us=pred))
        for r in rows:
            nat = next((q["avg_us"] for q in rows if q["bench"] == r["bench"]
                        and q["algorithm"] == "native" and q["size"] == r["size"]), None)
            r["ratio_vs_native"] = f"{r['avg_us'] / nat:.3f}" if nat else ""
        with open(raw, "w") as f:
            json.dump({"layout": args.layout, "rate_a": args.rate_a, "rate_b": args.rate_b,
                       "rows": rows, "predictions": predictions}, f, indent=1)
    with open(raw) as f:
        data = json.load(f)
    rows, predictions = data["rows"], data["predictions"]
    fields = ["bench", "algorithm", "n", "size", "avg_us", "predicted_us", "ratio_vs_native"]
    path = os.path.join(args.out_dir, "coll.csv")
    write_csv(path, rows, fields)
    print(f"\n{'bench':10} {'size':>8} {'config':>16} {'avg_us':>11} {'model_us':>11} {'vs native':>9}")
    for r in rows:
        conf = r["algorithm"] + (f" n={r['n']}" if r["n"] else "")
        pred = f"{r['predicted_us']:.1f}" if r["predicted_us"] != "" else ""
        print(f"{r['bench']:10} {r['size']:>8} {conf:>16} {r['avg_us']:>11.1f} {pred:>11} "
              f"{r['ratio_vs_native']:>9}")
    print(f"zipper-bench: wrote {path} and {raw}")
    plt = pyplot()
    if not plt:
        return
    for b in sorted({r["bench"] for r in rows}):
        sel = [r for r in rows if r["bench"] == b]
        if len({int(r["size"]) for r in sel}) == 1:
            coll_bars(plt, args, data, b, sel, predictions)
            continue
        fig, ax = plt.subplots(figsize=(8, 5))
        confs = sorted({(r["algorithm"], str(r["n"])) for r in sel})
        for i, (alg, n) in enumerate(confs):
            colour = f"C{i % 10}"
            pts = sorted((max(int(r["size"]), 1), float(r["avg_us"])) for r in sel
                         if (r["algorithm"], str(r["n"])) == (alg, n))
            label = alg + (f" n={n}" if n else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle="none",
                    color=colour, label=f"{label} (measured)")
            model = sorted((max(p["bytes"], 1), p["predicted_us"]) for p in predictions
                           if p["collective"] == b and p["algorithm"] == alg
                           and str(p["n"] or "") == n and pts and pts[0][0] <= max(p["bytes"], 1) <= pts[-1][0])
            if model:
                ax.plot([m[0] for m in model], [m[1] for m in model], "-", color=colour,
                        linewidth=1, label=f"{label} (model)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("latency (us)")
        ax.set_title(f"{b}, {data['layout']} through zipperd (A {data['rate_a']}, B {data['rate_b']})")
        ax.legend(fontsize=6)
        png = os.path.join(args.out_dir, f"coll-{b}.png")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
        print(f"zipper-bench: wrote {png}")



def coll_bars(plt, args, data, b, sel, predictions):
    """One size: a bar per configuration, measured beside the model."""
    size = int(sel[0]["size"])
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(sel) + 2), 5))
    labels, measured, model = [], [], []
    for r in sel:
        labels.append(r["algorithm"] + (f" n={r['n']}" if r["n"] else ""))
        measured.append(float(r["avg_us"]))
        pred = r["predicted_us"]
        if pred == "":
            pred = next((p["predicted_us"] for p in predictions if p["collective"] == b
                         and p["algorithm"] == r["algorithm"] and str(p["n"] or "") == str(r["n"])
                         and max(p["bytes"], 1) == max(size, 1)), "")
        model.append(float(pred) if pred != "" else None)
    xs = list(range(len(labels)))
    width = 0.4
    ax.bar([x - width / 2 for x in xs], measured, width, color="tab:blue", label="measured")
    with_model = [(x, m) for x, m in zip(xs, model) if m is not None]
    if with_model:
        ax.bar([x + width / 2 for x, _ in with_model], [m for _, m in with_model], width,
               color="tab:orange", label="model (pLogP)")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("latency (us)")
    at = "" if b == "barrier" else f" at {size_label(max(size, 1))}B"
    ax.set_title(f"{b}{at}, {data['layout']} through zipperd "
                 f"(A {data['rate_a']}, B {data['rate_b']})", fontsize=9)
    ax.legend(fontsize=7)
    png = os.path.join(args.out_dir, f"coll-{b}.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")


def tune(args, extra):
    os.makedirs(args.out_dir, exist_ok=True)
    x, y = (int(v) for v in args.layout.split("+"))
    toml = os.path.join(args.out_dir, "tuning.toml")
    report = os.path.join(args.out_dir, "tune.json")
    if not args.replot:
        emulate_up(x, y, args.rate_a, args.rate_b)
        prog = [tool("zipper-tune"), "--tuning-out", toml, "--report", report]
        prog += ["--quick"] if args.quick else []
        sys.stdout.write(zipper_run(x, y, x, y, prog + extra, timeout=3600))
    with open(report) as f:
        r = json.load(f)
    plt = pyplot()
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(7, 6))
    colls = sorted({p["collective"] for p in r["points"]})
    lo, hi = 1e30, 0
    for i, c in enumerate(colls):
        pts = [(k["measured_us"], k["predicted_us"]) for p in r["points"] if p["collective"] == c
               for k in p["candidates"] if k["measured_us"] > 0 and k["predicted_us"] > 0]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=f"C{i}", label=c,
                    markersize=4)
            lo, hi = min(lo, *(min(p) for p in pts)), max(hi, *(max(p) for p in pts))
    if hi > 0:
        ax.plot([lo, hi], [lo, hi], "-", color="grey", linewidth=0.8, label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured (us)")
    ax.set_ylabel("predicted by the pLogP model (us)")
    ax.set_title(f"zipper-tune {r['layout']['x']}+{r['layout']['y']}: model median error "
                 f"{100 * r['model_median_relative_error']:.0f} %")
    ax.legend(fontsize=7)
    png = os.path.join(args.out_dir, "tune-model.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench: wrote {png}")
    for c in colls:
        sel = sorted((p for p in r["points"] if p["collective"] == c), key=lambda p: p["bytes"])
        if len(sel) < 2:
            continue
        fig, ax = plt.subplots(figsize=(8, 5))
        xs = [max(p["bytes"], 1) for p in sel]
        ax.plot(xs, [p["builtin_us"] for p in sel], "o--", label="built-in rules")
        ax.plot(xs, [p["tuned_us"] for p in sel], "o-", label="tuned")
        for p in sel:
            t = p["tuned"]
            ax.annotate(t["algorithm"] + (f" n={t['n']}" if t["n"] else "")
                        + (f" s={t['segment_bytes']}" if t["segment_bytes"] else ""),
                        (max(p["bytes"], 1), p["tuned_us"]), fontsize=6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("latency (us)")
        # The verification's independent samples where the choices differ.
        ver = [p for p in sel if "verified" in p]
        if ver:
            ax.plot([max(p["bytes"], 1) for p in ver], [p["verified"]["builtin_us"] for p in ver],
                    "x", color="C0", label="built-in, verified")
            ax.plot([max(p["bytes"], 1) for p in ver], [p["verified"]["tuned_us"] for p in ver],
                    "x", color="C1", label="tuned, verified")
        per = r["figures"]["per_collective"] if "figures" in r else r["per_collective"]
        g = per[c]["speedup_vs_builtin_geomean"]
        ax.set_title(f"{c}: tuned vs built-in (geometric mean speedup {g:.2f})")
        ax.legend(fontsize=7)
        png = os.path.join(args.out_dir, f"tune-{c}.png")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
        print(f"zipper-bench: wrote {png}")

def main():
    version = VERSION if not VERSION.startswith("@") else "(source tree)"
    ap = argparse.ArgumentParser(prog="zipper-bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"zipper-bench {version}")
    sub = ap.add_subparsers(dest="cmd", required=True)
    fmt = argparse.ArgumentDefaultsHelpFormatter
    p = sub.add_parser("p2p", help="point-to-point, shaped and unshaped side by side",
                       formatter_class=fmt)
    p.add_argument("--links", default="shaped,unshaped",
                   help="emulated link settings to run, comma-separated: shaped (TBF at "
                   "--rate-a/--rate-b), unshaped")
    p.add_argument("--bench", default="latency,bw,bibw", help="OSU benchmarks, comma-separated")
    p.add_argument("--modes", default="native_a,native_b,forwarded",
                   help="runs per benchmark, comma-separated (also forwarded_splice)")
    p.add_argument("-m", "--message-size", default="",
                   help="[MIN:]MAX bytes (osu -m; empty: 1:4194304)")
    p.add_argument("-i", "--iterations", type=int, default=0,
                   help="timed iterations per size (osu -i; 0: OSU's default)")
    p.add_argument("-x", "--warmup", type=int, default=0,
                   help="warm-up iterations per size (osu -x; 0: OSU's default)")
    p.add_argument("-W", "--window", type=int, default=0,
                   help="messages in flight for bw/bibw (osu -W; 0: OSU's default, 64)")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs of every job: the CSV gives the median and min/max, the plots "
                   "shade the spread")
    p.add_argument("--rate-a", default="1gbit", help="cluster A's link rate when shaped (tc rate)")
    p.add_argument("--rate-b", default="4gbit", help="cluster B's link rate when shaped (tc rate)")
    p.add_argument("--local", action="store_true",
                   help="everything on this host over loopback (zipper-run --local)")
    p.add_argument("--hostfile-a", default="", help="real clusters: cluster A's mpirun hostfile")
    p.add_argument("--hostfile-b", default="", help="real clusters: cluster B's mpirun hostfile")
    p.add_argument("--forwarder-a", default="", help="zipperd's address for cluster A, HOST:PORT")
    p.add_argument("--forwarder-b", default="", help="zipperd's address for cluster B, HOST:PORT")
    p.add_argument("--link", choices=("tcp", "verbs"), default="tcp",
                   help="link to zipperd for forwarder addresses without a scheme")
    p.add_argument("--mpirun-args", default="", help="extra mpirun arguments (zipper-run)")
    p.add_argument("--zipperd-arg", action="append", default=[], metavar="ARG",
                   help="extra zipperd argument (repeatable; zipper-run --zipperd-arg), e.g. "
                   "--zipperd-arg=--verbs-write-min=0")
    p.add_argument("--perftest", default="",
                   help="SERVER_DEV,CLIENT_DEV,SERVER_IP: add ib_send_lat / ib_write_bw")
    p.add_argument("--perftest-gid", type=int, default=None, help="GID index for perftest (-x)")
    p.add_argument("--timeout", type=int, default=1800, help="limit per run, seconds")
    p.add_argument("--out-dir", default="bench-p2p", help="where the CSV and plots go")
    c = sub.add_parser("coll", help="collectives per algorithm and n vs native, with the model",
                       formatter_class=fmt)
    c.add_argument("--layout", default="4+4", help="X+Y ranks in clusters A and B")
    c.add_argument("--bench", default="barrier,bcast,reduce,allreduce,alltoall,alltoallv",
                   help="OSU collective benchmarks, comma-separated")
    c.add_argument("--sizes", default="4:1048576",
                   help="[MIN:]MAX bytes (osu -m; MIN:MIN gives one size, drawn as bars)")
    c.add_argument("--rate-a", default="1gbit", help="cluster A's link rate (tc rate)")
    c.add_argument("--rate-b", default="4gbit", help="cluster B's link rate (tc rate)")
    c.add_argument("--out-dir", default="bench-coll", help="where the CSV, JSON and plots go")
    t = sub.add_parser("tune", help="zipper-tune on the emulation, with plots of its report",
                       formatter_class=fmt)
    t.add_argument("--layout", default="4+4", help="X+Y ranks in clusters A and B")
    t.add_argument("--rate-a", default="1gbit", help="cluster A's link rate (tc rate)")
    t.add_argument("--rate-b", default="4gbit", help="cluster B's link rate (tc rate)")
    t.add_argument("--quick", action="store_true", help="zipper-tune --quick: a few minutes")
    t.add_argument("--out-dir", default="tune", help="where the tuning file, report and plots go")
    n = zipper_bench_npb.add_parser(sub)
    st, fo = zipper_bench_rails.add_parsers(sub)
    rm = zipper_bench_rma.add_parser(sub)
    for sp in (p, c, t, n, st, fo, rm):
        sp.add_argument("--replot", action="store_true",
                        help="measure nothing: report and plot the CSVs already in --out-dir")
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    if args.cmd == "npb":
        return zipper_bench_npb.run(args, tool, pyplot, write_csv, read_csv)
    if args.cmd == "rma":
        return zipper_bench_rma.run(args, tool, pyplot, write_csv, read_csv)
    if args.cmd == "stripe":
        return zipper_bench_rails.stripe(args, tool, pyplot, write_csv)
    if args.cmd == "failover":
        return zipper_bench_rails.failover(args, tool, pyplot, write_csv)
    {"p2p": p2p, "coll": coll, "tune": tune}[args.cmd](args, extra)


if __name__ == "__main__":
    main()
