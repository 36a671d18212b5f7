#!/usr/bin/env python3
"""Unmodified Debian binaries across the emulated clusters through
libmmpi_transparent (issue 19), each checked by its own verification.

  transparent_debian.py BIN_DIR LIBMMPI_TRANSPARENT netpipe|hpcc|lammps

- netpipe: NPopenmpi (netpipe-openmpi) -i at 1+1: NetPIPE's integrity mode,
  every size of its default range up to 8 MiB; every size must report
  "Integrity check passed" and none fail.
- hpcc: a small hpccinf.txt (N=400, NB=40, 2x2 grid) at 2+2: HPL's residual
  check and every other test pass (no FAILED line, "Success=1", 0 residual
  failures, no RandomAccess errors).
- lammps: lmp (lammps) on the shipped examples/melt input at 2+2: every thermo
  line equals a native run's (4 ranks, one mpirun) within 1e-6 relative.

The package is installed with apt-get when its binary is missing; exit 77
(CTest: skipped) with the reason when that is impossible or when the
emulated clusters cannot be built here.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = {  # name: (package, binary, x, y)
    "netpipe": ("netpipe-openmpi", "NPopenmpi", 1, 1),
    "hpcc": ("hpcc", "hpcc", 2, 2),
    "lammps": ("lammps", "lmp", 2, 2),
}
# hpcc's example input (hpcc/examples/_hpccinf.txt) with N=400, NB=40, 2x2.
HPCCINF = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
400          Ns
1            # of NBs
40           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
2            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      \t\tNumber of additional problem sizes for PTRANS
1200 10000 30000        \tvalues of N
0                       \tnumber of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       \tvalues of NB
"""
MELT = "/usr/share/lammps/examples/melt/in.melt"


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def ensure(package, binary):
    """The binary's path, installing package with apt-get if needed."""
    path = shutil.which(binary)
    if path:
        return path
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        skip(f"{binary} missing and apt-get unavailable (or not root) to install {package}")
    r = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", package],
                       capture_output=True, text=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    path = shutil.which(binary)
    if r.returncode != 0 or path is None:
        skip(f"apt-get install {package} failed: {(r.stderr or r.stdout).strip()[-300:]}")
    return path


def ensure_file(package, path):
    """Installs package with apt-get if path is missing (skips if impossible)."""
    if os.path.exists(path):
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        skip(f"{path} missing and apt-get unavailable (or not root) to install {package}")
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", package],
                   capture_output=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if not os.path.exists(path):
        skip(f"apt-get install {package} did not provide {path}")


def zipper_run(bin_dir, lib, x, y, argv, cwd):
    """Runs argv transparently at x+y on the emulated clusters; its output."""
    env = subprocess.run([os.path.join(bin_dir, "zipper-transparent-check"), "--env", "--lib",
                          lib], capture_output=True, text=True, check=True).stdout.split()
    cmd = [os.path.join(bin_dir, "zipper-run"), "-x", str(x), "-y", str(y), "--timeout", "400",
           "--emulated"] + [a for kv in env for a in ("--env", kv)] + ["--"] + argv
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    print(out[-4000:])
    if r.returncode != 0:
        fail(f"zipper-run exited with status {r.returncode}")
    return out


def check_netpipe(out, cwd):
    sizes = re.findall(r"^\s*(\d+):\s+(\d+) bytes.*-->\s+Integrity check (\w+)", out, re.M)
    bad = [s for s in sizes if s[2] != "passed"] + re.findall(r".*[Ii]ntegrity.*fail.*", out)
    if bad:
        fail(f"integrity failures: {bad[:5]}")
    if len(sizes) < 40 or int(sizes[-1][1]) < 8 << 20:
        fail(f"only {len(sizes)} sizes checked, the largest {sizes[-1][1] if sizes else 0} B")
    return f"{len(sizes)} sizes up to {sizes[-1][1]} B"


def check_hpcc(out, cwd):
    path = os.path.join(cwd, "hpccoutf.txt")
    if not os.path.exists(path):
        fail("no hpccoutf.txt")
    text = open(path, encoding="utf-8", errors="replace").read()
    passed = len(re.findall(r"\bPASSED\b", text))
    problems = []
    if re.search(r"\bFAILED\b", text):
        problems.append("a FAILED line")
    if "Success=1" not in text:
        problems.append("no Success=1 in the summary")
    if not re.search(r"^\s*0 tests completed and failed residual checks", text, re.M):
        problems.append("residual checks failed")
    for key in ("MPIRandomAccess_Errors", "MPIRandomAccess_LCG_Errors"):
        m = re.search(rf"^{key}=(\S+)", text, re.M)
        if not m or float(m.group(1)) != 0:
            problems.append(f"{key}={m.group(1) if m else 'missing'}")
    if passed == 0:
        problems.append("no PASSED check")
    if problems:
        fail("hpcc: " + ", ".join(problems))
    return f"{passed} checks PASSED, Success=1"


def thermo(text):
    """Rows of numbers after each 'Step ...' header up to 'Loop time'."""
    rows, inside = [], False
    for line in text.splitlines():
        if re.match(r"^\s*Step\b", line):
            inside = True
        elif line.startswith("Loop time"):
            inside = False
        elif inside:
            try:
                rows.append([float(v) for v in line.split()])
            except ValueError:
                inside = False
    return rows


def check_lammps(out, cwd):
    native = subprocess.run(["mpirun", "-np", "4", "--oversubscribe", "lmp", "-in", "in.melt",
                             "-log", "native.log"], cwd=cwd, capture_output=True, text=True,
                            timeout=400, env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                                                  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    if native.returncode != 0:
        fail(f"native lammps run failed: {native.stderr[-500:]}")
    want, got = thermo(native.stdout), thermo(out)
    if not want or len(want) != len(got):
        fail(f"{len(got)} thermo lines through zipper, {len(want)} native")
    for w, g in zip(want, got):
        if len(w) != len(g) or any(abs(a - b) > 1e-6 * max(1.0, abs(a)) for a, b in zip(w, g)):
            fail(f"thermo differs: native {w}, zipper {g}")
    if "on 4 procs" not in out:
        fail("lammps did not run on 4 procs")
    return f"{len(got)} thermo lines equal the native run's, final {got[-1]}"


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in PROGRAMS:
        print(__doc__)
        return 2
    bin_dir, lib, name = sys.argv[1:]
    package, binary, x, y = PROGRAMS[name]
    r = subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "check"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        skip(f"emulated clusters unavailable: {(r.stdout + r.stderr).strip()}")
    path = ensure(package, binary)
    subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "up", "--nodes-a", "1", "--nodes-b",
                    "1", "--force"], check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix=f"transparent-{name}-") as cwd:
        os.chmod(cwd, 0o755)
        if name == "netpipe":
            argv = [path, "-i", "-o", os.path.join(cwd, "np.out")]
        elif name == "hpcc":
            with open(os.path.join(cwd, "hpccinf.txt"), "w", encoding="utf-8") as f:
                f.write(HPCCINF)
            argv = [path]
        else:
            if not os.path.exists(MELT):
                ensure_file("lammps-examples", MELT)
            shutil.copy(MELT, cwd)
            argv = [path, "-in", "in.melt", "-log", "zipper.log"]
        out = zipper_run(bin_dir, lib, x, y, argv, cwd)
        what = {"netpipe": check_netpipe, "hpcc": check_hpcc, "lammps": check_lammps}[name](
            out, cwd)
    print(f"PASS {name} {x}+{y}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
