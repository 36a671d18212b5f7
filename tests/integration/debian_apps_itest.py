#!/usr/bin/python3
"""Unmodified MPI programs from Debian across the emulated clusters through
zipperd (zipper-run --transparent), each checked by its own verification:

  netpipe  NPopenmpi -i (integrity check of every size up to 4 MiB), 1+1;
  hpcc     a small hpccinf.txt, 2+2: every residual check passes;
  lammps   examples/melt, 2+2: the final thermo line equals a native run's
           (4 ranks in cluster A) within 1e-6 relative.

usage: debian_apps_itest.py BIN_DIR netpipe|hpcc|lammps. The packages are
installed with apt-get if missing; exit 77 (skipped, with the reason) without
the emulation or apt."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

PACKAGES = {"netpipe": ["netpipe-openmpi"], "hpcc": ["hpcc"],
            "lammps": ["lammps", "lammps-examples"]}
EXES = {"netpipe": "/usr/bin/NPopenmpi", "hpcc": "/usr/bin/hpcc", "lammps": "/usr/bin/lmp"}
MELT = "/usr/share/lammps/examples/melt/in.melt"


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def ensure_packages(app):
    missing = [p for p in PACKAGES[app] if "install ok installed" not in subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True).stdout]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        skip(f"{' '.join(missing)} not installed and apt-get unavailable (needs root)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        skip(f"apt-get install {' '.join(missing)} failed: {p.stdout.strip()[-300:]}")


def zrun(bin_dir, x, y, prog, cwd, transparent=True, standalone=False, nodes=None):
    cmd = [os.path.join(bin_dir, "zipper-run"), "--emulated", "-x", str(x), "-y", str(y),
           "--nodes-a", str(nodes[0] if nodes else max(x, 1)),
           "--nodes-b", str(nodes[1] if nodes else max(y, 1)), "--timeout", "600"]
    cmd += ["--standalone"] if standalone else []
    cmd += ["--transparent"] if transparent else []
    cmd += ["--"] + prog
    print("running", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    if p.returncode != 0:
        sys.stdout.write(p.stdout[-6000:])
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}")
    return p.stdout


def netpipe(bin_dir, d):
    out = os.path.join(d, "np.out")
    text = zrun(bin_dir, 1, 1, [EXES["netpipe"], "-i", "-u", str(4 << 20), "-n", "2", "-o", out], d)
    passed = re.findall(r"(\d+) bytes .*Integrity check passed", text)
    assert "fail" not in text.lower(), text[-3000:]
    sizes = {int(s) for s in passed}
    # NetPIPE's sweep with perturbations: 40 sizes from 1 B to 3 MiB + 1 (under -u 4 MiB).
    assert len(passed) >= 35 and max(sizes) >= 3 << 20, f"{len(passed)} sizes checked: {text[-2000:]}"
    print(f"PASS netpipe: {len(passed)} message sizes up to {max(sizes)} B intact")


def hpcc(bin_dir, d):
    with open("/usr/share/doc/hpcc/examples/_hpccinf.txt") as f:
        text = f.read()
    text = re.sub(r"^1000(\s+Ns)", r"400\1", text, flags=re.M)
    text = re.sub(r"^80(\s+NBs)", r"40\1", text, flags=re.M)
    with open(os.path.join(d, "hpccinf.txt"), "w") as f:
        f.write(text)
    zrun(bin_dir, 2, 2, [EXES["hpcc"]], d)
    with open(os.path.join(d, "hpccoutf.txt")) as f:
        out = f.read()
    assert "End of HPC Challenge tests." in out, out[-3000:]
    failed = [m for m in re.findall(r"(\d+) tests completed and failed residual checks", out)
              if int(m) != 0]
    passed = [int(m) for m in re.findall(r"(\d+) tests completed and passed residual checks", out)]
    assert not failed and passed and all(p > 0 for p in passed), out[-3000:]
    assert "FAILED" not in out, [l for l in out.splitlines() if "FAILED" in l]
    succ = re.findall(r"Success=(\d+)", out)
    assert succ and all(s == "1" for s in succ), succ
    assert "Found 0 errors" in out or "errors" not in out
    print(f"PASS hpcc: residual checks passed ({sum(passed)} tests), Success=1 x{len(succ)}")


def last_thermo(text):
    rows, in_table = [], False
    for line in text.splitlines():
        if line.strip().startswith("Step "):
            in_table = True
            continue
        if in_table:
            f = line.split()
            if f and re.fullmatch(r"\d+", f[0]):
                rows.append([float(v) for v in f])
            else:
                in_table = False
    assert rows, text[-3000:]
    return rows[-1]


def lammps(bin_dir, d):
    prog = [EXES["lammps"], "-in", MELT, "-log", "none"]
    native = last_thermo(zrun(bin_dir, 4, 0, prog, d, transparent=False, standalone=True,
                              nodes=(4, 2)))
    zipper = last_thermo(zrun(bin_dir, 2, 2, prog, d))
    assert native[0] == zipper[0] == 250, (native, zipper)
    for a, b in zip(native, zipper):
        assert abs(a - b) <= 1e-6 * max(1.0, abs(a)), f"native {native} vs zipper {zipper}"
    print(f"PASS lammps melt: final thermo {zipper} equals native {native}")


def main():
    bin_dir, app = sys.argv[1], sys.argv[2]
    check = subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "check"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        skip(f"emulated clusters unavailable: {check.stdout.strip()}")
    ensure_packages(app)
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Enough nodes for every run below (native LAMMPS: 4 in A); idempotent.
    up = [os.path.join(bin_dir, "zipper-emulate"), "up", "--nodes-a", "4", "--nodes-b", "4"]
    if subprocess.call(up) != 0:
        sys.exit("FAIL: " + " ".join(up))
    with tempfile.TemporaryDirectory() as d:
        {"netpipe": netpipe, "hpcc": hpcc, "lammps": lammps}[app](bin_dir, d)


if __name__ == "__main__":
    main()
