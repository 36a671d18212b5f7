"""What every zipper-bench family shares: where its tools are, CSV in and
out, matplotlib when present, and jobs through zipper-run on the emulation."""

import csv
import os
import subprocess
import sys

BIN = os.path.dirname(os.path.realpath(__file__))  # installed: libexec/zipper, through bin's link


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


def tool(name):
    return os.path.join(BIN, name)


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
