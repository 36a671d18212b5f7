#!/usr/bin/python3
"""zipper-bench npb end to end: class S of EP, CG, MG, IS and LU from an
unmodified NPB 3.4-MPI tree (built in a copy), native in A, native in B and
through zipperd under zipper-run --transparent at 2+2. Every run must verify
(NPB's own check), and the CSV, ratio table and plot must name every kernel
and mode.

usage: npb_itest.py BIN_DIR NPB_SRC. Exit 77 (skipped) without the emulation
or the NPB tree ($ZIPPER_NPB_SRC overrides NPB_SRC)."""

import csv
import os
import subprocess
import sys
import tempfile

KERNELS = ("ep", "cg", "mg", "is", "lu")
MODES = ("native_a", "native_b", "zipper")


def tree_state(root):
    """Every file under root with its size and mtime: a build in place shows."""
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            st = os.lstat(os.path.join(d, f))
            out.add((os.path.join(d, f), st.st_size, st.st_mtime_ns))
    return out


def main():
    bin_dir, src = sys.argv[1], os.environ.get("ZIPPER_NPB_SRC", sys.argv[2])
    check = subprocess.run([os.path.join(bin_dir, "zipper-emulate"), "check"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        print(f"SKIP: emulated clusters unavailable: {check.stdout.strip()}")
        return 77
    if not os.path.isfile(os.path.join(src, "config", "make.def.template")):
        print(f"SKIP: no NPB-MPI tree at {src} (set ZIPPER_NPB_SRC)")
        return 77
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    before = tree_state(src)
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(bin_dir, "zipper-bench"), "npb", "--npb-src", src, "--classes", "S",
               "--kernels", ",".join(KERNELS), "--layouts", "2+2", "--modes", ",".join(MODES),
               "--out-dir", out]
        rc = subprocess.call(cmd)
        assert rc == 0, f"zipper-bench npb exited {rc}"
        rows = list(csv.DictReader(open(os.path.join(out, "npb.csv"))))
        for k in KERNELS:
            for m in MODES:
                got = [r for r in rows if r["kernel"] == k and r["mode"] == m]
                assert len(got) == 1, f"{k} {m}: {len(got)} rows"
                assert got[0]["verified"] == "yes" and float(got[0]["time_s"]) >= 0, got[0]
        ratios = list(csv.DictReader(open(os.path.join(out, "npb-ratios.csv"))))
        for k in KERNELS:
            z = [r for r in ratios if r["kernel"] == k and r["mode"] == "zipper"]
            nat = [r for r in rows if r["kernel"] == k and r["mode"] == "native_a"]
            # A ratio wherever native A took measurable time (NPB prints 2 decimals).
            assert z and (z[0]["over_native_a"] or float(nat[0]["time_s"]) == 0), \
                f"{k}: no zipper/native A ratio"
        assert os.path.getsize(os.path.join(out, "npb.png")) > 0
    assert tree_state(src) == before, "the NPB tree was modified (it must be built in a copy)"
    print(f"PASS npb: {len(KERNELS)} kernels x {len(MODES)} modes verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
