#!/usr/bin/env python3
"""PETSc's KSP tutorial ex2 (Debian's petsc-dev, unmodified, built with mpicc
and pkg-config) through libmmpi_transparent across the clusters:
at 2+2 and 1+3 it must report the same iteration count and error norm as a
native run of 4 ranks. PETSc keeps its inner communicators as attributes of
MPI_COMM_SELF and of the user's communicators, which this exercises.

usage: petsc_ex2_itest.py BIN_DIR WORK_DIR. Exit 77 (skipped, with the
reason) when PETSc or its examples are not installed."""

import os
import re
import shutil
import subprocess
import sys

EXAMPLE = "/usr/share/petsc/3.18/share/petsc/examples/src/ksp/ksp/tutorials/ex2.c"
ARGS = ["-m", "64", "-n", "64"]
PORTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration",
                     "loopback_ports.py")
RESULT = re.compile(r"Norm of error (\S+),? iterations (\d+)")


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def run(cmd, cwd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    m = RESULT.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.stdout.write(p.stdout[-4000:])
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}" + ("" if m else ", no result line"))
    return m.group(1), int(m.group(2))


def main():
    bin_dir, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not os.path.isfile(EXAMPLE):
        skip(f"{EXAMPLE} missing (apt-get install petsc-dev libpetsc3.18-dev-examples)")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "petsc"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    if flags.returncode != 0:
        skip("pkg-config knows no petsc (apt-get install petsc-dev)")
    os.makedirs(work, exist_ok=True)
    shutil.copy2(EXAMPLE, os.path.join(work, "ex2.c"))
    cc = subprocess.run(["mpicc", "-O1", "ex2.c", "-o", "ex2"] + flags.stdout.split(), cwd=work,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if cc.returncode != 0:
        sys.exit(f"FAIL: building ex2: {cc.stdout[-2000:]}")
    exe = os.path.join(work, "ex2")
    native = run(["mpirun", "-np", "4", "--oversubscribe", exe] + ARGS, work)
    print(f"native 4 ranks: error norm {native[0]}, {native[1]} iterations", flush=True)
    for x, y in ((2, 2), (1, 3)):
        # Below the ephemeral range, free now (tests/integration/loopback_ports.py).
        port = subprocess.run([sys.executable, PORTS], capture_output=True, text=True,
                              check=True).stdout.strip()
        got = run([os.path.join(bin_dir, "zipper-run"), "--local", "--transparent", "-x", str(x),
                   "-y", str(y), "--port", port, "--timeout", "240", "--", exe] + ARGS, work)
        print(f"zipper {x}+{y}: error norm {got[0]}, {got[1]} iterations", flush=True)
        if got != native:
            sys.exit(f"FAIL: {x}+{y} gives {got}, native {native}")
    print(f"PASS petsc ex2: {native[1]} iterations, error norm {native[0]} at 2+2 and 1+3 as native")
    return 0


if __name__ == "__main__":
    sys.exit(main())
