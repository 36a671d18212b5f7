#!/usr/bin/env python3
"""zipper-run --profile and --rank-map end to end on loopback (--local, no
root): the communication matrix of known patterns (mmpi_profile_itest.c)
against the exact counts worked out here from each pattern's definition and
the algorithm it is given; a program's results with and without a rank map,
each rank running where the map says; zipper-place and zipper-place-view on a
profile. Each check is one to three runs of 4 or 6 ranks, a few seconds each.

  profile_itest.py BIN_DIR ring|halo|alltoall|colls|rankmap|rankmap_profile|view

Exit status 0 pass, 1 fail, 77 skipped (the view without matplotlib).
PROFILE_ITEST_PORT chooses zipperd's loopback port (default: a free one from
loopback_ports.py).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = None


class Failed(Exception):
    pass


def port():
    if os.environ.get("PROFILE_ITEST_PORT"):
        return os.environ["PROFILE_ITEST_PORT"]
    return subprocess.run([sys.executable, os.path.join(HERE, "loopback_ports.py")], check=True,
                          capture_output=True, text=True).stdout.strip()


def zipper_run(args, pattern, env=()):
    """Runs mmpi_profile_itest PATTERN through zipper-run --local; its output."""
    cmd = [os.path.join(BIN, "zipper-run"), "--local", "--port", port(), "--timeout", "120"]
    for e in env:
        cmd += ["--env", e]
    cmd += list(args) + ["--", os.path.join(BIN, "mmpi_profile_itest"), pattern]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    out = p.stdout + p.stderr
    if p.returncode != 0 or f"PASS {pattern}" not in p.stdout:
        raise Failed(f"{' '.join(cmd)} exited {p.returncode}:\n{out}")
    return out


def profile(d, name, x, y, pattern, env=(), extra=()):
    """The matrix of one run: (parsed JSON, {(src, dst): (bytes, messages)})."""
    path = os.path.join(d, name)
    out = zipper_run(["-x", str(x), "-y", str(y), "--profile", path, *extra], pattern, env)
    if f"communication matrix: {path}" not in out:
        raise Failed(f"zipper-run did not report the matrix:\n{out}")
    with open(path) as f:
        m = json.load(f)
    if [row[:2] for row in m["traffic"]] != sorted(row[:2] for row in m["traffic"]):
        raise Failed("the rows are not in (src, dst) order")
    cells = {}
    for src, dst, nbytes, msgs in m["traffic"]:
        if (src, dst) in cells:
            raise Failed(f"pair {src}->{dst} listed twice")
        cells[(src, dst)] = (nbytes, msgs)
    return m, cells


def expect(cells, want, what):
    if cells != want:
        lines = [f"{what}: the matrix differs from the pattern's exact counts (pair: got / expected)"]
        for k in sorted(set(cells) | set(want)):
            if cells.get(k) != want.get(k):
                lines.append(f"  {k}: {cells.get(k)} / {want.get(k)}")
        raise Failed("\n".join(lines))


def expect_layout(m, x, y, site_of):
    if m["format"] != "zipper-comm-matrix" or m["version"] != 1:
        raise Failed(f"format/version: {m['format']} {m['version']}")
    if m["sites"] != [{"name": "A", "ranks": x}, {"name": "B", "ranks": y}]:
        raise Failed(f"sites: {m['sites']}")
    if m["site_of"] != site_of:
        raise Failed(f"site_of {m['site_of']}, expected {site_of}")


def block(x, y):
    return [0] * x + [1] * y


# ---- the patterns' exact matrices -----------------------------------------

def ring_cells(n):
    return {(r, (r + 1) % n): (3 * (r + 1) * 8192, 3) for r in range(n)}


def halo_cells(n):
    cols, want = n // 2, {}
    for r in range(n):
        row, col = divmod(r, cols)
        for ok, peer, nbytes in ((col + 1 < cols, r + 1, 800), (col > 0, r - 1, 800),
                                 (row > 0, r - cols, 1600), (row < 1, r + cols, 1600)):
            if ok:
                want[(r, peer)] = (2 * nbytes, 2)  # two steps
    return want


def alltoall_cells(n):
    # alltoallv, direct algorithm: the native exchange inside each cluster
    # (one message per pair by its data flow) and one message per remote block.
    return {(r, d): ((r + 1) * (d + 1) * 16 * 4, 1) for r in range(n) for d in range(n) if d != r}


def colls_cells(x, y):
    """MMPI_Bcast of 40000 bytes from 0 by farfirst, then MMPI_Allreduce of
    1000 doubles by two_tier, both unsegmented (docs/collectives.md)."""
    want = {}

    def add(s, d, nbytes):
        b, m = want.get((s, d), (0, 0))
        want[(s, d)] = (b + nbytes, m + 1)
    a, b_ = list(range(x)), list(range(x, x + y))
    bcast, red = 40000, 8000
    add(0, x, bcast)                      # root to the far leader
    for r in a[1:]:
        add(0, r, bcast)                  # native bcast in A from the root
    for r in b_[1:]:
        add(x, r, bcast)                  # native bcast in B from its leader
    for r in a[1:]:
        add(r, 0, red)                    # native reduce to A's leader
    for r in b_[1:]:
        add(r, x, red)                    # native reduce to B's leader
    add(0, x, red)                        # the leaders swap partials
    add(x, 0, red)
    for r in a[1:]:
        add(0, r, red)                    # native bcast of the result
    for r in b_[1:]:
        add(x, r, red)
    return want


COLLS_ENV = ("MMPI_BCAST_ALGORITHM=farfirst", "MMPI_ALLREDUCE_ALGORITHM=two_tier",
             "MMPI_SEGMENT_BYTES=0")


def write_map(d, a, b):
    path = os.path.join(d, "map.json")
    with open(path, "w") as f:
        json.dump({"format": "zipper-rank-map", "version": 1,
                   "sites": [{"name": "A", "ranks": a}, {"name": "B", "ranks": b}]}, f)
    return path


def lines(out, prefix):
    return sorted(line for line in out.splitlines() if line.startswith(prefix))


# ---- the checks -------------------------------------------------------------

def check_ring(d):
    m, cells = profile(d, "ring.json", 2, 2, "ring")
    expect_layout(m, 2, 2, block(2, 2))
    expect(cells, ring_cells(4), "ring 2+2")


def check_halo(d):
    m, cells = profile(d, "halo.json", 3, 3, "halo")
    expect_layout(m, 3, 3, block(3, 3))
    expect(cells, halo_cells(6), "2 x 3 halo, 3+3")


def check_alltoall(d):
    m, cells = profile(d, "a2a.json", 3, 3, "alltoall",
                       env=("MMPI_ALLTOALLV_ALGORITHM=direct",))
    expect_layout(m, 3, 3, block(3, 3))
    expect(cells, alltoall_cells(6), "alltoallv 3+3")


def check_colls(d):
    m, cells = profile(d, "colls.json", 2, 2, "colls", env=COLLS_ENV)
    expect_layout(m, 2, 2, block(2, 2))
    expect(cells, colls_cells(2, 2), "bcast + allreduce 2+2")


def check_rankmap(d):
    # Clusters interleaved: A runs world ranks 0 and 3, B runs 1 and 2; then
    # 3+3 with A = {1, 4, 5}.
    for x, y, a, b in ((2, 2, [0, 3], [1, 2]), (3, 3, [1, 4, 5], [0, 2, 3])):
        plain = zipper_run(["-x", str(x), "-y", str(y)], "results")
        placed = zipper_run(["--rank-map", write_map(d, a, b)], "results")
        if len(lines(plain, "RESULT")) != x + y or lines(plain, "RESULT") != lines(placed, "RESULT"):
            raise Failed(f"{x}+{y}: results differ under the rank map:\n--- block order\n"
                         + "\n".join(lines(plain, "RESULT")) + "\n--- mapped\n"
                         + "\n".join(lines(placed, "RESULT")))
        for out, low in ((plain, range(x)), (placed, a)):
            want = sorted(f"WHERE rank {r}: {'low' if r in low else 'high'}" for r in range(x + y))
            if lines(out, "WHERE") != want:
                raise Failed(f"{x}+{y}: ranks ran in {lines(out, 'WHERE')}, expected {want}")


def check_rankmap_profile(d):
    # The matrix names MPI_COMM_WORLD ranks whatever the placement, in their
    # order, and its layout is the map's; zipper-place reads it and sees
    # that layout. (Under the second map the virtual ranks' order is not the
    # world ranks': rank 1's peers 0, 2, 4 run as virtual ranks 3, 0, 2.)
    m, cells = profile(d, "ring-mapped.json", 2, 2, "ring",
                       extra=("--rank-map", write_map(d, [0, 3], [1, 2])))
    expect_layout(m, 2, 2, [0, 1, 1, 0])
    expect(cells, ring_cells(4), "ring 2+2 under a rank map")
    m, cells = profile(d, "halo-mapped.json", 3, 3, "halo",
                       extra=("--rank-map", write_map(d, [2, 3, 4], [0, 1, 5])))
    expect_layout(m, 3, 3, [1, 1, 0, 0, 0, 1])
    expect(cells, halo_cells(6), "2 x 3 halo, 3+3 under a rank map")
    p = subprocess.run([os.path.join(BIN, "zipper-place"), os.path.join(d, "halo-mapped.json"), "-o",
                        os.path.join(d, "placed.json")], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or "profiled layout:" not in p.stdout:
        raise Failed(f"zipper-place on the profile: {p.returncode}\n{p.stdout}{p.stderr}")


def check_view(d):
    view = os.path.join(BIN, "zipper-place-view")
    with open(view) as f:
        python = f.readline()[2:].strip()
    if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        print(f"SKIP: python3-matplotlib not installed for {python}")
        sys.exit(77)
    profile(d, "halo.json", 3, 3, "halo")
    matrix = os.path.join(d, "halo.json")
    p = subprocess.run([os.path.join(BIN, "zipper-place"), matrix, "-o", os.path.join(d, "map.json")],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failed(f"zipper-place: {p.stdout}{p.stderr}")
    for extra, png, crossing in (([], "halo.png", "19200 of 32000 bytes"),
                                 (["--map", os.path.join(d, "map.json")], "placed.png",
                                  "12800 of 32000 bytes")):
        out = os.path.join(d, png)
        p = subprocess.run([view, matrix, "-o", out] + extra, capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0 or crossing not in p.stdout:
            raise Failed(f"zipper-place-view {extra}: {p.returncode}\n{p.stdout}{p.stderr}")
        with open(out, "rb") as f:
            head = f.read(8)
        if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(out) < 5000:
            raise Failed(f"{png} is not a PNG picture ({os.path.getsize(out)} bytes)")


CHECKS = {"ring": check_ring, "halo": check_halo, "alltoall": check_alltoall, "colls": check_colls,
          "rankmap": check_rankmap, "rankmap_profile": check_rankmap_profile, "view": check_view}


def main():
    global BIN
    if len(sys.argv) != 3 or sys.argv[2] not in CHECKS:
        print(f"usage: {sys.argv[0]} BIN_DIR {'|'.join(CHECKS)}", file=sys.stderr)
        return 2
    BIN = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        try:
            CHECKS[sys.argv[2]](d)
        except Failed as e:
            print(f"FAIL {sys.argv[2]}: {e}")
            return 1
    print(f"PASS {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
