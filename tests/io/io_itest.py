#!/usr/bin/env python3
"""MPI-IO across the clusters (docs/io.md), one check per run.

usage: io_itest.py BIN_DIR CHECK X+Y [PROGRAM_DIR]

CHECK:
  suite_transparent  the same, unported, through zipper-run --transparent;
  suite      mmpi_io_itest all (explicit offsets, views, non-blocking, split
             collectives, shared and ordered pointers, sync-barrier-sync
             consistency, atomic mode), ported, on the emulated clusters;
  notshared  cluster B's ranks see another directory (their own mount
             namespace): every rank must print the one-line error and the
             job must end non-zero within 10 s of it;
  hdf5, pnetcdf, netcdf4, fortran, h5py
             the unmodified program run natively (one mpirun, X+Y ranks) and
             through zipper-run --transparent; each checks every value it
             reads, and the two files must dump alike (h5dump, ncdump, cmp).
Exit 0 on success, 1 on failure, 77 (skipped) when the emulation or a tool
is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def log(msg):
    print(f"io_itest: {msg}", flush=True)


def fail(msg):
    log(f"FAIL: {msg}")
    sys.exit(1)


def emulation_up(bin_dir, na, nb):
    r = subprocess.run([f"{bin_dir}/zipper-emulate", "check"], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"SKIP: emulated clusters unavailable: {(r.stdout + r.stderr).strip()}")
        sys.exit(SKIP)
    subprocess.run([f"{bin_dir}/zipper-emulate", "up", "--nodes-a", str(na), "--nodes-b", str(nb),
                    "--force"], check=True, stdout=subprocess.DEVNULL)


def zipper_run(bin_dir, x, y, argv, transparent=False, timeout=200):
    cmd = [f"{bin_dir}/zipper-run", "-x", str(x), "-y", str(y), "--emulated", "--timeout",
           str(timeout - 20)]
    if transparent:
        cmd.append("--transparent")
    return cmd + ["--"] + argv


def run(cmd, timeout=200, env=None):
    log("$ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    out = r.stdout + r.stderr
    # zipperd's own log lines are long and many: keep what the ranks said.
    print("\n".join(l for l in out.splitlines() if "[zipperd]" not in l)[-6000:], flush=True)
    return r.returncode, out


def native(argv, n):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return run(["mpirun", "--oversubscribe", "-np", str(n)] + argv, env=env)


def suite(bin_dir, x, y, work, prog=None):
    transparent = prog is not None
    prog = prog or f"{bin_dir}/mmpi_io_itest"
    rc, out = run(zipper_run(bin_dir, x, y, [prog, "all", work], transparent=transparent))
    if rc != 0 or not re.search(r"^PASS all ", out, re.M):
        fail(f"mmpi_io_itest all at {x}+{y}: exit {rc}")


def notshared(bin_dir, x, y, work):
    cmd = zipper_run(bin_dir, x, y, [f"{bin_dir}/mmpi_io_itest", "notshared", work])
    log("$ " + " ".join(cmd))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first_error, lines = None, []
    for line in p.stdout:
        if "cannot see the file" in line and first_error is None:
            first_error = time.monotonic()
        if "[zipperd]" not in line:
            print(line, end="", flush=True)
        lines.append(line)
    rc = p.wait()
    end = time.monotonic()
    out = "".join(lines)
    if "SKIP: cannot make a mount namespace" in out:
        log("SKIP: no mount namespaces here")
        sys.exit(SKIP)
    errors = re.findall(r"^mmpi\[rank (\d+)\]: MPI_File_open\(\"[^\"]+notshared.dat\"\): cluster B "
                        r"cannot see the file that cluster A sees in (\S+) .*MPI_ERR_NO_SUCH_FILE",
                        out, re.M)
    ranks = sorted(int(r) for r, _ in errors)
    if ranks != list(range(x + y)):
        fail(f"one-line error from ranks {ranks}, expected every rank 0..{x + y - 1}")
    if any(d != work for _, d in errors):
        fail("the error does not name the directory")
    if not re.search(r"^PASS notshared ", out, re.M):
        fail("the ranks did not all get MPI_ERR_NO_SUCH_FILE")
    if rc == 0:
        fail("the job exited 0")
    if os.path.exists(os.path.join(work, "notshared.dat")):
        fail("notshared.dat was created on cluster A's side")
    took = end - first_error
    log(f"job ended with status {rc}, {took:.1f} s after the first error line")
    if took > 10:
        fail(f"the job took {took:.1f} s to end after the error (more than 10 s)")


def h5dump(path):
    r = subprocess.run(["h5dump", path], capture_output=True, text=True, check=True)
    return r.stdout.replace(path, "FILE")


def ncdump(path):
    r = subprocess.run(["ncdump", path], capture_output=True, text=True, check=True)
    return "\n".join(r.stdout.splitlines()[1:])  # line 1 names the file


def compared(bin_dir, x, y, work, name, argv_of, dump, python=False):
    for tool in {"hdf5": ["h5dump"], "h5py": ["h5dump"], "pnetcdf": ["ncdump"],
                 "netcdf4": ["ncdump"]}.get(name, []):
        if shutil.which(tool) is None:
            log(f"SKIP: {tool} not installed")
            sys.exit(SKIP)
    nat, zip_ = os.path.join(work, f"native.{name}"), os.path.join(work, f"zipper.{name}")
    rc, out = native(argv_of(nat), x + y)
    if rc != 0 or f"PASS {name}" not in out:
        fail(f"native run of {name} failed (exit {rc})")
    rc, out = run(zipper_run(bin_dir, x, y, argv_of(zip_), transparent=True))
    if rc != 0 or not re.search(rf"^PASS {name} {x + y} ranks", out, re.M):
        fail(f"{name} through zipper-run --transparent at {x}+{y}: exit {rc}")
    a, b = dump(nat), dump(zip_)
    if a != b:
        import difflib
        print("".join(list(difflib.unified_diff(a.splitlines(True), b.splitlines(True)))[:40]))
        fail(f"{name}: the file written across the clusters differs from the native one")
    log(f"{name}: the file written across {x}+{y} dumps like the native one")


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    bin_dir, check, layout = sys.argv[1], sys.argv[2], sys.argv[3]
    prog_dir = sys.argv[4] if len(sys.argv) > 4 else bin_dir
    x, y = (int(v) for v in layout.split("+"))
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    emulation_up(bin_dir, 1, 1)
    # One directory both clusters see (the namespaces share the file system).
    work = tempfile.mkdtemp(prefix=f"zipper-io-{check}-", dir="/var/tmp")
    try:
        if check == "suite":
            suite(bin_dir, x, y, work)
        elif check == "suite_transparent":
            suite(bin_dir, x, y, work, f"{prog_dir}/mmpi_io_itest_unported")
        elif check == "notshared":
            notshared(bin_dir, x, y, work)
        elif check == "hdf5":
            compared(bin_dir, x, y, work, "hdf5", lambda f: [f"{prog_dir}/h5_itest", f], h5dump)
        elif check == "pnetcdf":
            compared(bin_dir, x, y, work, "pnetcdf", lambda f: [f"{prog_dir}/pnetcdf_itest", f],
                     ncdump)
        elif check == "netcdf4":
            compared(bin_dir, x, y, work, "netcdf4", lambda f: [f"{prog_dir}/netcdf4_itest", f],
                     ncdump)
        elif check == "fortran":
            compared(bin_dir, x, y, work, "fortran",
                     lambda f: [f"{prog_dir}/fortran_io_itest", f],
                     lambda p: open(p, "rb").read())
        elif check == "h5py":
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "h5py_itest.py")
            r = subprocess.run(["/usr/bin/python3", "-c", "import mpi4py, h5py"],
                               capture_output=True)
            if r.returncode != 0:
                log("SKIP: python3-h5py-mpi / python3-mpi4py not importable")
                return SKIP
            compared(bin_dir, x, y, work, "h5py", lambda f: ["/usr/bin/python3", script, f],
                     h5dump)
        else:
            print(__doc__)
            return 2
    finally:
        subprocess.run(["umount", "-l", os.path.join(work, ".cluster-b-view")],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    log(f"PASS {check} {layout}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
