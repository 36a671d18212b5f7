#!/usr/bin/env python3
"""Start-up under Slurm: `zipper-run --slurm` at 2+2 against `srun` of 4 ranks in one cluster.

    slurm_startup.py BIN_DIR OUT_DIR [--reps N] [--rate RATE]

Brings up a real Slurm on the emulation (tests/launcher/slurm_emulation.py),
then inside two heterogeneous allocations (A: 2 nodes, 4 tasks; B: 2 nodes)
measures, side by side and alternating, from the launch command to the
first rank's return from MPI_Init (bench/init_time.c prints CLOCK_REALTIME;
all emulated nodes share the host's clock):
  native     srun --het-group=0 -n 4 --mpi=pmix init_time_native (cluster A only)
  service    zipper-run --slurm -x 2 -y 2 -- init_time, through the site's
             zipperd service named with its pinned key in the site configuration
  per-job    the same with a hetjob component 2: zipper-run first starts a
             per-job zipperd step on the bridge node and pins its fresh key
Writes OUT_DIR/slurm_startup[_RATE].csv (one row per run) and
slurm_startup[_RATE].png (median and range per variant), and prints the
ratios to native. --rate RATE shapes every link (zipper-emulate --rate-a/-b)
for the run and leaves the emulation unshaped after.
Needs root and the Slurm packages (deploy/install-deps.sh).
"""

import csv
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "launcher"))
import slurm_emulation  # noqa: E402

RANK_ENV = {"OMPI_MCA_btl_tcp_if_include": "eth0", "OMPI_MCA_mpi_yield_when_idle": "1"}


def first_init(stdout, t0, nranks):
    """Seconds from t0 (ns) to the earliest INIT line; None unless all nranks reported."""
    times = [int(ln.split()[2]) for ln in stdout.splitlines() if ln.startswith("INIT ")]
    if len(times) != nranks:
        return None
    return (min(times) - t0) / 1e9


def inner(argv):
    """Runs inside the allocation: VARIANTS REPS BIN SITE -> lines 'RESULT variant rep seconds'."""
    variants, reps, bin_dir, site = argv[0].split(","), int(argv[1]), argv[2], argv[3]
    cmds = {
        "native": ["srun", "--het-group=0", "-n", "4", "-N", "2", "--mpi=pmix",
                   os.path.join(bin_dir, "init_time_native")],
        "service": [os.path.join(bin_dir, "zipper-run"), "--slurm", "--slurm-site", site, "-x", "2", "-y", "2",
                    "--", os.path.join(bin_dir, "init_time")],
    }
    cmds["per-job"] = cmds["service"]
    for rep in range(reps):
        order = variants if rep % 2 == 0 else list(reversed(variants))
        for v in order:
            t0 = time.time_ns()
            r = subprocess.run(cmds[v], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
            dt = first_init(r.stdout, t0, 4)
            if r.returncode != 0 or dt is None:
                print(f"ERROR {v} rep {rep}: exit {r.returncode}: " + " | ".join(
                (r.stdout + r.stderr).strip().splitlines()[-6:]), flush=True)
                continue
            print(f"RESULT {v} {rep} {dt:.4f}", flush=True)


def start_service(emu, bin_dir):
    d = os.path.join(emu.base, "bench-service")
    os.makedirs(d, mode=0o700)
    log = open(os.path.join(d, "log"), "wb")
    p = subprocess.Popen(["ip", "netns", "exec", "zipper", os.path.join(bin_dir, "zipperd"),
                          "--listen", "A=10.201.0.254:7580", "--listen", "B=10.202.0.254:7580",
                          "--pid-file", os.path.join(d, "pid"), "--host-key", os.path.join(d, "key")],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    while not os.path.exists(os.path.join(d, "pid")):
        if p.poll() is not None:
            raise RuntimeError("zipperd did not start")
        time.sleep(0.05)
    key = re.search(r"[0-9a-f]{64}", open(os.path.join(d, "key.pub")).read()).group(0)
    site = os.path.join(d, "site.toml")
    with open(site, "w") as f:
        f.write(f'[bridges.zipper]\na = "10.201.0.254:7580"\nb = "10.202.0.254:7580"\nkey = "{key}"\n'
                'job_a = "10.201.0.254:7581"\njob_b = "10.202.0.254:7581"\n')
    return p, site


def main(argv):
    if len(argv) > 1 and argv[1] == "--inner":
        inner(argv[2:])
        return 0
    if len(argv) < 3:
        print(__doc__)
        return 2
    bin_dir, out_dir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 5
    rate = argv[argv.index("--rate") + 1] if "--rate" in argv else ""
    why = slurm_emulation.missing()
    if why:
        print(f"SKIP: {why}")
        return 77
    if rate:  # shaped links: rebuild the emulation with tbf on every link
        subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "up", "--nodes-a", "2", "--nodes-b", "2",
                        "--rate-a", rate, "--rate-b", rate], check=True)
    emu = slurm_emulation.SlurmEmulation(bin_dir)
    rows = []
    svc = None
    try:
        emu.start()
        svc, site = start_service(emu, bin_dir)
        env = emu.alpha.env()
        env.update(RANK_ENV)
        me = os.path.abspath(__file__)
        for comps, variants in ((["-p", "a", "-N2", "-n4", ":", "-p", "b", "-N2", "-n2"], "native,service"),
                                (["-p", "a", "-N2", "-n4", ":", "-p", "b", "-N2", "-n2", ":", "-p", "bridge",
                                  "-N1"], "native,per-job")):
            r = subprocess.run(emu.alpha.client(["salloc"] + comps + [sys.executable, me, "--inner", variants,
                                                                      str(reps), bin_dir, site]),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=900)
            for ln in r.stdout.splitlines():
                f = ln.split()
                if f and f[0] == "RESULT":
                    rows.append((f[1], int(f[2]), float(f[3]), variants))
                elif f and f[0] == "ERROR":
                    print(ln)
            if r.returncode != 0:
                print(r.stderr[-2000:])
    finally:
        if svc:
            svc.terminate()
            svc.wait()
        emu.stop()
        if rate:  # leave the emulation unshaped, as other runs expect it
            subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "up", "--nodes-a", "2", "--nodes-b", "2"],
                           check=False)
    os.makedirs(out_dir, exist_ok=True)
    tag = f"_{rate}" if rate else ""
    with open(os.path.join(out_dir, f"slurm_startup{tag}.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "rep", "seconds_to_first_mpi_init", "allocation"])
        for row in rows:
            w.writerow([row[0], row[1], f"{row[2]:.4f}", row[3].replace(",", "+")])
    summary = {}
    for v in ("native", "service", "per-job"):
        xs = [r[2] for r in rows if r[0] == v]
        if xs:
            summary[v] = (statistics.median(xs), min(xs), max(xs), len(xs))
    for v, (med, lo, hi, n) in summary.items():
        print(f"{v:8s} median {med:.3f} s (min {lo:.3f}, max {hi:.3f}, {n} runs)")
    # Ratios side by side: each variant against the native runs of its own allocation.
    for v in ("service", "per-job"):
        mine = [r[2] for r in rows if r[0] == v]
        alloc = next((r[3] for r in rows if r[0] == v), None)
        nat = [r[2] for r in rows if r[0] == "native" and r[3] == alloc]
        if mine and nat:
            print(f"{v:8s} / native of the same allocation: median {statistics.median(mine):.3f} / "
                  f"{statistics.median(nat):.3f} = {statistics.median(mine) / statistics.median(nat):.2f} x")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = list(summary)
        meds = [summary[v][0] for v in names]
        err = [[summary[v][0] - summary[v][1] for v in names], [summary[v][2] - summary[v][0] for v in names]]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.bar(names, meds, yerr=err, capsize=6, color=["#777", "#3a7", "#37a"][:len(names)])
        if "native" in summary:
            ax.axhline(1.5 * summary["native"][0], ls="--", color="red", label="1.5 x native (target)")
            ax.legend()
        ax.set_ylabel("launch to first MPI_Init return (s)")
        ax.set_title(f"Start-up under Slurm, 2+2 vs 4 ranks native{' (shaped ' + rate + ')' if rate else ''}")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"slurm_startup{tag}.png"), dpi=110)
    except ImportError:
        print("matplotlib missing: no plot")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
