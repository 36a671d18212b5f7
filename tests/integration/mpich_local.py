#!/usr/bin/env python3
"""libmmpi on MPICH (docs/mpi.md): the MPICH build (-DZIPPER_MPI=mpich,
deploy/build.sh's build-mpich) runs real programs across two local clusters
launched by zipper-run --mpi mpich (Hydra), through the Open MPI build's
zipperd and zipper-run (zipperd does not depend on the MPI).

  mpich_local.py BIN MPICH_BUILD SRC_DIR

Builds, with MPICH's wrappers (seconds, no libmmpi build):
  - mmpi_itest.c (ported) with mmpicc-mpich: the point-to-point suites
    (every byte checked, MPI_ANY_SOURCE included) at 2+2;
  - mmpi_coll_itest.c (ported): coll_allreduce, every datatype x op against a
    reference, at 2+2;
  - mmpi_itest.c unported (unprefix.py) with mpicc.mpich, run through
    libmmpi_transparent-mpich (zipper-run --transparent): ring and comm_api;
  - mpi4_refused.c with mpicc.mpich through the layer at 1+1: MPI-4.0 calls
    refused with MPI_ERR_UNSUPPORTED_OPERATION and one line naming each.
Each job must print its PASS lines and exit 0. Exit 77 (skipped) where
MPICH is not installed; exit 1 naming what failed otherwise (a missing
MPICH build included: deploy/build.sh builds it).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

P2P = "ring,pingpong,anysource,big,many,mix,errors,pipeline,comms,comm_api"


def fail(msg):
    print(f"mpich_local: FAIL: {msg}", flush=True)
    sys.exit(1)


def run(cmd, env=None, timeout=300):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env, timeout=timeout)
    return p.returncode, p.stdout, time.monotonic() - t0


def job(bin_dir, here, args, prog, tests, env=None, ranks=("2", "2"), lines=()):
    """zipper-run --mpi mpich --local 2+2 PROG TESTS; every PASS line required,
    and each regular expression of `lines` must match a line of the output."""
    port = subprocess.check_output([os.path.join(here, "loopback_ports.py"), "1"],
                                   text=True).strip()
    cmd = [os.path.join(bin_dir, "zipper-run"), "--mpi", "mpich", "--local", "--port", port,
           "-x", ranks[0], "-y", ranks[1], "--timeout", "240"] + args + ["--", prog, tests]
    rc, out, secs = run(cmd, env=env)
    print(out, end="")
    for name in tests.split(","):
        if not re.search(rf"^PASS {re.escape(name)} ", out, re.M):
            fail(f"{os.path.basename(prog)}: no 'PASS {name}' line (zipper-run exit status {rc})")
    for rx in lines:
        if not re.search(rx, out, re.M):
            fail(f"{os.path.basename(prog)}: no output line matches '{rx}'")
    if rc != 0:
        fail(f"{os.path.basename(prog)} {tests}: zipper-run exited with status {rc}")
    print(f"mpich_local: {os.path.basename(prog)} {tests}: passed in {secs:.1f} s", flush=True)


def main():
    bin_dir, build, src = sys.argv[1:4]
    here = os.path.dirname(os.path.abspath(__file__))
    mpicc = shutil.which("mpicc.mpich")
    if not (mpicc and shutil.which("mpiexec.mpich")):
        print("SKIP: MPICH is not installed (mpicc.mpich, mpiexec.mpich: Debian's mpich and "
              "libmpich-dev, deploy/install-deps.sh)")
        return 77
    mmpicc = os.path.join(build, "bin", "mmpicc-mpich")
    layer = os.path.join(build, "client", "libmmpi_transparent-mpich.so")
    for f in (mmpicc, os.path.join(build, "client", "libmmpi-mpich.so"), layer):
        if not os.path.exists(f):
            fail(f"{f} is missing: build the MPICH configuration (deploy/build.sh builds it "
                 f"into build-mpich)")
    idir = os.path.join(src, "tests", "integration")
    with tempfile.TemporaryDirectory(prefix="mpich_local.") as tmp:
        progs = {}
        for name, cc, source in (
                ("p2p", mmpicc, os.path.join(idir, "mmpi_itest.c")),
                ("coll", mmpicc, os.path.join(idir, "mmpi_coll_itest.c"))):
            progs[name] = os.path.join(tmp, name)
            rc, out, _ = run([cc, "-O1", "-I", idir, source, "-o", progs[name], "-lm"])
            if rc != 0:
                fail(f"{os.path.basename(cc)} {os.path.basename(source)}:\n{out}")
        udir = os.path.join(tmp, "unported")
        ported = [os.path.join(idir, f) for f in
                  ("mmpi_itest.c", "itest_comm.h", "itest_check.h")]
        rc, out, _ = run([sys.executable, os.path.join(idir, "unprefix.py"), "--out", udir]
                         + ported)
        if rc != 0:
            fail(f"unprefix.py: {out}")
        progs["unported"] = os.path.join(tmp, "p2p_unported")
        rc, out, _ = run([mpicc, "-O1", "-I", idir, os.path.join(udir, "mmpi_itest.c"), "-o",
                          progs["unported"], "-lm"])
        if rc != 0:
            fail(f"mpicc.mpich (unported mmpi_itest.c):\n{out}")
        progs["mpi4"] = os.path.join(tmp, "mpi4_refused")
        rc, out, _ = run([mpicc, "-O1", os.path.join(idir, "mpi4_refused.c"), "-o", progs["mpi4"]])
        if rc != 0:
            fail(f"mpicc.mpich mpi4_refused.c:\n{out}")

        # The MPICH-built program runs under Hydra; the caller's Open MPI
        # settings mean nothing there.
        job(bin_dir, here, [], progs["p2p"], P2P)
        job(bin_dir, here, [], progs["coll"], "coll_allreduce")
        env = dict(os.environ, MMPI_TRANSPARENT_LIB=layer)
        job(bin_dir, here, ["--transparent"], progs["unported"], "ring,comm_api", env=env)
        job(bin_dir, here, ["--transparent"], progs["mpi4"], "refused", env=env, ranks=("1", "1"),
            lines=[r"^mmpi transparent: MPI_Isendrecv is not supported",
                   r"^mmpi transparent: MPI_Send_c is not supported"])
    print("mpich_local: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
