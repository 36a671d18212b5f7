"""zipper-bench npb: the NAS Parallel Benchmarks comparison runs.

Builds the user's unmodified NPB 3.3/3.4-MPI tree (a copy, never in place)
with plain mpicc/mpif90 and runs, for each layout X+Y asked:
  native_a  X+Y ranks in cluster A (one per emulated node), Open MPI alone;
  native_b  X+Y ranks in cluster B likewise;
  zipper    X ranks in A and Y in B through zipperd, the unmodified binary
            under `zipper-run --transparent`;
  ported    (with --ported-src DIR) an M-prefix port of NPB built with
            mmpicc/mmpif90, X+Y through zipperd.
Every run must print NPB's `Verification = SUCCESSFUL`; a run that does not
is reported and makes the command exit 1 (the CSV still says which).
Writes DIR/npb.csv (kernel,class,layout,np,mode,run,time_s,mops,verified),
DIR/npb-ratios.csv (median and spread of zipper / native), and
DIR/npb.png: time against process count, native A, native B and zipper, one
panel per kernel (the Leiden thesis' §4 form).
NPB is not in Debian and none of its code is in zipper: pass --npb-src.
"""

import os
import re
import shutil
import statistics
import subprocess
import sys

KERNELS = ("ep", "cg", "mg", "is", "lu")
MODES = ("native_a", "native_b", "zipper", "ported")

# gfortran >= 10 rejects what NPB's Fortran does with mpif.h buffers and its
# BOZ constants; these make it build as NPB's authors intended.
FFLAGS = "-O2 -fallow-argument-mismatch -fallow-invalid-boz"
CFLAGS = "-O2"


def add_parser(sub):
    n = sub.add_parser("npb", help="NAS Parallel Benchmarks: native A, native B and zipper")
    n.add_argument("--npb-src", required=False, default="",
                   help="an unmodified NPB3.3/3.4-MPI tree (read only; built in a copy)")
    n.add_argument("--ported-src", default="",
                   help="optional: an M-prefix port of the same tree, built with mmpicc/mmpif90")
    n.add_argument("--kernels", default=",".join(KERNELS), help="of ep,cg,mg,is,lu")
    n.add_argument("--classes", default="S", help="of S,W,A,B")
    n.add_argument("--layouts", default="2+2", help="X+Y[,X+Y...]")
    n.add_argument("--modes", default="native_a,native_b,zipper")
    n.add_argument("--repeat", type=int, default=1, help="runs of each (give the spread)")
    n.add_argument("--rate-a", default="1gbit", help="'' for unshaped")
    n.add_argument("--rate-b", default="4gbit", help="'' for unshaped")
    n.add_argument("--timeout", type=int, default=1800, help="limit per run, seconds")
    n.add_argument("--out-dir", default="bench-npb")
    return n


def parse_layouts(spec):
    out = []
    for item in spec.split(","):
        m = re.fullmatch(r"(\d+)\+(\d+)", item.strip())
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            sys.exit(f"zipper-bench npb: bad layout '{item}' (want X+Y, both at least 1)")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def build_tree(src, dest, kernels, classes, mpicc, mpif90, log):
    """Copies `src` to `dest` and builds kernel.class.x for each pair; returns
    {(kernel, class): path}. Exits with the build log's tail on failure."""
    if not os.path.isfile(os.path.join(src, "config", "make.def.template")):
        sys.exit(f"zipper-bench npb: {src} is not an NPB-MPI tree (no config/make.def.template)")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=True)
    with open(os.path.join(dest, "config", "make.def.template")) as f:
        text = f.read()
    subst = {"MPIFC": mpif90, "MPICC": mpicc, "FFLAGS": FFLAGS, "CFLAGS": CFLAGS}
    for key, value in subst.items():
        text = re.sub(rf"^{key}\s*=.*$", f"{key}\t= {value}", text, flags=re.M)
    with open(os.path.join(dest, "config", "make.def"), "w") as f:
        f.write(text)
    os.makedirs(os.path.join(dest, "bin"), exist_ok=True)
    out = {}
    for k in kernels:
        for c in classes:
            print(f"zipper-bench npb: building {k}.{c} in {dest}", flush=True)
            with open(log, "a") as lf:
                rc = subprocess.call(["make", k, f"CLASS={c}"], cwd=dest, stdout=lf,
                                     stderr=subprocess.STDOUT)
            exe = os.path.join(dest, "bin", f"{k}.{c}.x")
            if rc != 0 or not os.access(exe, os.X_OK):
                with open(log) as lf:
                    tail = "".join(lf.readlines()[-30:])
                sys.exit(f"{tail}\nzipper-bench npb: building {k}.{c} failed (log: {log})")
            out[(k, c)] = exe
    return out


def parse_npb(text):
    """(time_s, mops, verified) from NPB's report; None where absent."""
    t = re.search(r"Time in seconds\s*=\s*([0-9.]+)", text)
    m = re.search(r"Mop/s total\s*=\s*([0-9.]+)", text)
    v = re.search(r"Verification\s*=\s*(\S+)", text)
    return (float(t.group(1)) if t else None, float(m.group(1)) if m else None,
            bool(v and v.group(1) == "SUCCESSFUL"))


def run_one(tool, mode, x, y, exe, rates, timeout, cwd):
    np_ = x + y
    cmd = [tool("zipper-run"), "--emulated", "--timeout", str(timeout)]
    if mode == "native_a":
        cmd += ["-x", str(np_), "-y", "0", "--nodes-a", str(np_), "--nodes-b", str(y),
                "--standalone"]
    elif mode == "native_b":
        cmd += ["-x", "0", "-y", str(np_), "--nodes-a", str(x), "--nodes-b", str(np_),
                "--standalone"]
    else:
        cmd += ["-x", str(x), "-y", str(y), "--nodes-a", str(x), "--nodes-b", str(y)]
        if mode == "zipper":
            cmd += ["--transparent"]
    cmd += ["--", exe]
    print("zipper-bench npb: running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       cwd=cwd)
    return p.returncode, p.stdout


def emulate_up(tool, nodes_a, nodes_b, rates):
    cmd = [tool("zipper-emulate"), "up", "--nodes-a", str(nodes_a), "--nodes-b", str(nodes_b)]
    if rates[0]:
        cmd += ["--rate-a", rates[0]]
    if rates[1]:
        cmd += ["--rate-b", rates[1]]
    print("zipper-bench npb: running", " ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        sys.exit("zipper-bench npb: zipper-emulate up failed")


def spread(values):
    if not values:
        return "", "", ""
    return (f"{statistics.median(values):.3f}", f"{min(values):.3f}", f"{max(values):.3f}")


def run(args, tool, pyplot, write_csv, read_csv):
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.abspath(args.out_dir)
    kernels = [k.strip().lower() for k in args.kernels.split(",") if k.strip()]
    classes = [c.strip().upper() for c in args.classes.split(",") if c.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [k for k in kernels if k not in KERNELS] + [m for m in modes if m not in MODES]
    bad += [c for c in classes if c not in ("S", "W", "A", "B")]
    if bad:
        sys.exit(f"zipper-bench npb: unknown {', '.join(bad)} (kernels {','.join(KERNELS)}; "
                 f"modes {','.join(MODES)}; classes S,W,A,B)")
    if args.ported_src and "ported" not in modes:
        modes.append("ported")
    if "ported" in modes and not args.ported_src:
        sys.exit("zipper-bench npb: mode 'ported' needs --ported-src DIR")
    layouts = parse_layouts(args.layouts)
    csv_path = os.path.join(out, "npb.csv")
    fields = ["kernel", "class", "layout", "np", "mode", "run", "time_s", "mops", "verified"]
    if not args.replot:
        if not args.npb_src:
            sys.exit("zipper-bench npb: --npb-src DIR is required (NPB is not in Debian)")
        log = os.path.join(out, "build.log")
        open(log, "w").close()
        plain = build_tree(os.path.abspath(args.npb_src), os.path.join(out, "npb-plain"),
                           kernels, classes, os.environ.get("MPICC", "mpicc"),
                           os.environ.get("MPIF90", "mpif90"), log)
        ported = {}
        if "ported" in modes:
            ported = build_tree(os.path.abspath(args.ported_src), os.path.join(out, "npb-ported"),
                                kernels, classes, tool("mmpicc"), tool("mmpif90"), log)
        rates = (args.rate_a, args.rate_b)
        emulate_up(tool, max(x + y for x, y in layouts), max(x + y for x, y in layouts), rates)
        rows = []
        for x, y in layouts:
            for k in kernels:
                for c in classes:
                    for r in range(args.repeat):
                        # Alternating: every mode once per round, so drift hits all alike.
                        for mode in modes:
                            exe = (ported if mode == "ported" else plain)[(k, c)]
                            rc, text = run_one(tool, mode, x, y, exe, rates, args.timeout, out)
                            t, mops, ok = parse_npb(text)
                            ok = ok and rc == 0
                            if not ok:
                                sys.stdout.write(text[-4000:])
                                print(f"zipper-bench npb: FAILED {k}.{c} {mode} {x}+{y} run {r}: "
                                      f"exit {rc}, no 'Verification = SUCCESSFUL'", flush=True)
                            rows.append(dict(kernel=k, **{"class": c}, layout=f"{x}+{y}",
                                             np=x + y, mode=mode, run=r,
                                             time_s=t if t is not None else "",
                                             mops=mops if mops is not None else "",
                                             verified="yes" if ok else "no"))
                            write_csv(csv_path, rows, fields)  # partial results survive a crash
    rows = read_csv(csv_path)
    report(rows, out, write_csv, pyplot)
    failed = [r for r in rows if r["verified"] != "yes"]
    if failed:
        for r in failed:
            print(f"zipper-bench npb: NOT VERIFIED: {r['kernel']}.{r['class']} {r['mode']} "
                  f"{r['layout']} run {r['run']}", file=sys.stderr)
        sys.exit(1)


def report(rows, out, write_csv, pyplot):
    times = {}
    for r in rows:
        if r["verified"] == "yes" and r["time_s"] != "":
            times.setdefault((r["kernel"], r["class"], r["layout"], r["mode"]), []).append(
                float(r["time_s"]))
    ratios = []
    print(f"\n{'kernel':6} {'class':5} {'layout':6} {'mode':9} {'median s':>9} "
          f"{'vs native A':>18} {'vs native B':>18}")
    for (k, c, lay, mode), ts in sorted(times.items()):
        line = dict(kernel=k, **{"class": c}, layout=lay, mode=mode, runs=len(ts))
        line["median_s"], line["min_s"], line["max_s"] = spread(ts)
        for ref in ("native_a", "native_b"):
            base = times.get((k, c, lay, ref))
            # Ratio per run index pairs runs of one round (measured side by side).
            # NPB prints 2 decimals: a class S kernel can read 0.00 s (no ratio).
            rs = [t / b for t, b in zip(ts, base) if b > 0] if base and mode != ref else []
            med, lo, hi = spread(rs)
            line[f"over_{ref}"] = med
            line[f"over_{ref}_min"], line[f"over_{ref}_max"] = lo, hi
        ratios.append(line)

        def show(ref):
            return f"{line[f'over_{ref}']} ({line[f'over_{ref}_min']}-{line[f'over_{ref}_max']})" \
                if line[f"over_{ref}"] else ""

        print(f"{k:6} {c:5} {lay:6} {mode:9} {line['median_s']:>9} {show('native_a'):>18} "
              f"{show('native_b'):>18}")
    path = os.path.join(out, "npb-ratios.csv")
    write_csv(path, ratios, ["kernel", "class", "layout", "mode", "runs", "median_s", "min_s",
                             "max_s", "over_native_a", "over_native_a_min", "over_native_a_max",
                             "over_native_b", "over_native_b_min", "over_native_b_max"])
    print(f"zipper-bench npb: wrote {os.path.join(out, 'npb.csv')} and {path}")
    plt = pyplot()
    if not plt or not times:
        return
    kernels = sorted({k for k, _, _, _ in times})
    classes = sorted({c for _, c, _, _ in times})
    fig, axes = plt.subplots(len(classes), len(kernels), figsize=(3.2 * len(kernels),
                             3.0 * len(classes)), squeeze=False)
    styles = {"native_a": ("C0", "o"), "native_b": ("C1", "s"), "zipper": ("C3", "^"),
              "ported": ("C2", "v")}
    for ci, c in enumerate(classes):
        for ki, k in enumerate(kernels):
            ax = axes[ci][ki]
            for mode, (colour, marker) in styles.items():
                pts = sorted((int(lay.split("+")[0]) + int(lay.split("+")[1]), ts)
                             for (kk, cc, lay, m), ts in times.items()
                             if (kk, cc, m) == (k, c, mode))
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                med = [statistics.median(p[1]) for p in pts]
                lo = [m - min(p[1]) for m, p in zip(med, pts)]
                hi = [max(p[1]) - m for m, p in zip(med, pts)]
                ax.errorbar(xs, med, yerr=[lo, hi], color=colour, marker=marker, capsize=3,
                            label=mode.replace("_", " "))
            ax.set_title(f"{k.upper()} class {c}")
            ax.set_xlabel("processes")
            ax.set_ylabel("time (s)")
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=7)
    fig.suptitle("NPB: native A, native B and zipper (median, bars: min-max of runs)")
    fig.tight_layout()
    png = os.path.join(out, "npb.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"zipper-bench npb: wrote {png}")
