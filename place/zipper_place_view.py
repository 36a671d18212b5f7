#!/usr/bin/python3
"""zipper-place-view: a communication matrix (zipper-run --profile, format
"zipper-comm-matrix", docs/placement.md) as a heat map.

Rows are senders, columns receivers, both grouped by site (site order, world
rank order within a site) so that each site is one block on the diagonal,
outlined and named; everything off those blocks crosses a bridge. With --map
the blocks are those of a rank map (zipper-place's output): the same traffic
seen under the placement it proposes. Colour is bytes (or --messages) on a
logarithmic scale; pairs that exchanged nothing stay white. Above --max-cells
ranks per side, ranks are binned (sums) so that the picture stays bounded.

Exit status: 0 picture written; 1 a file could not be read, parsed or
written, or matplotlib is missing; 2 usage.
"""
import argparse
import json
import sys

VERSION = "@PROJECT_VERSION@"
PROG = "zipper-place-view"


class Bad(Exception):
    """A file that cannot be used: one line on stderr, exit 1."""


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise Bad(f"{path}: {e.strerror}") from None
    except ValueError as e:
        raise Bad(f"{path}: not JSON ({e})") from None


def load_matrix(path):
    """(site names, site of each rank, [(src, dst, bytes, messages)])."""
    m = read_json(path)
    if not isinstance(m, dict) or m.get("format") != "zipper-comm-matrix":
        raise Bad(f'{path}: not a communication matrix (format is not "zipper-comm-matrix")')
    if m.get("version") != 1:
        raise Bad(f"{path}: communication matrix version {m.get('version')!r}; this "
                  f"{PROG} reads version 1")
    try:
        names = [str(s["name"]) for s in m["sites"]]
        counts = [int(s["ranks"]) for s in m["sites"]]
        site_of = [int(s) for s in m["site_of"]]
        rows = [tuple(int(v) for v in row) for row in m["traffic"]]
    except (KeyError, TypeError, ValueError) as e:
        raise Bad(f"{path}: communication matrix: missing or bad field ({e})") from None
    n = len(site_of)
    if not names or sum(counts) != n or any(not 0 <= s < len(names) for s in site_of):
        raise Bad(f"{path}: sites and site_of do not agree")
    for row in rows:
        if len(row) != 4 or not (0 <= row[0] < n and 0 <= row[1] < n) or min(row[2:]) < 0:
            raise Bad(f"{path}: traffic row {list(row)} is not [src, dst, bytes, messages] "
                      f"within 0..{n - 1}")
    return names, site_of, rows


def load_map(path, names, n):
    """site_of from a rank map over the matrix's sites."""
    m = read_json(path)
    if not isinstance(m, dict) or m.get("format") != "zipper-rank-map" or m.get("version") != 1:
        raise Bad(f'{path}: not a rank map (format "zipper-rank-map", version 1)')
    site_of = [-1] * n
    try:
        if [s["name"] for s in m["sites"]] != names:
            raise Bad(f"{path}: its sites are not the matrix's ({', '.join(names)})")
        for s, site in enumerate(m["sites"]):
            for r in site["ranks"]:
                if not 0 <= r < n or site_of[r] >= 0:
                    raise Bad(f"{path}: rank {r} is outside 0..{n - 1} or listed twice")
                site_of[r] = s
    except (KeyError, TypeError) as e:
        raise Bad(f"{path}: rank map: missing or bad field ({e})") from None
    if -1 in site_of:
        raise Bad(f"{path}: rank {site_of.index(-1)} is in no site")
    return site_of


def draw(names, site_of, rows, out, messages, title, max_cells):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
        from matplotlib.colors import LogNorm
        from matplotlib.patches import Rectangle
    except ImportError:
        raise Bad(f"{PROG} needs python3-matplotlib (Debian: apt-get install python3-matplotlib)") \
            from None
    n = len(site_of)
    order = sorted(range(n), key=lambda w: (site_of[w], w))
    pos = [0] * n
    for i, w in enumerate(order):
        pos[w] = i
    cells = min(n, max_cells)
    binned = cells < n
    grid = np.zeros((cells, cells))
    total = crossing = 0
    for src, dst, nbytes, nmsg in rows:
        v = nmsg if messages else nbytes
        grid[pos[src] * cells // n, pos[dst] * cells // n] += v
        total += v
        if site_of[src] != site_of[dst]:
            crossing += v
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    shown = np.ma.masked_where(grid <= 0, grid)
    if shown.count():
        img = ax.imshow(shown, cmap="viridis", interpolation="nearest", origin="upper",
                        norm=LogNorm(vmin=shown.min(), vmax=max(shown.max(), shown.min() * 1.0001)),
                        extent=(0, cells, cells, 0))
        fig.colorbar(img, ax=ax, label=("messages" if messages else "bytes") + " sent")
    ax.set_xlim(0, cells)
    ax.set_ylim(cells, 0)
    # Each site's block on the diagonal, outlined and named.
    first = 0
    for s, name in enumerate(names):
        k = site_of.count(s)
        lo, hi = first * cells / n, (first + k) * cells / n
        ax.add_patch(Rectangle((lo, lo), hi - lo, hi - lo, fill=False, edgecolor="red", lw=2))
        ax.text(lo + 0.01 * cells, lo + 0.01 * cells, f"{name} ({k})", color="red", ha="left",
                va="top", fontsize=10, fontweight="bold",
                bbox={"facecolor": "white", "edgecolor": "red", "alpha": 0.85, "pad": 2})
        if first:
            ax.axhline(lo, color="red", lw=0.8, ls="--")
            ax.axvline(lo, color="red", lw=0.8, ls="--")
        first += k
    if not binned and n <= 64:
        ticks = [i + 0.5 for i in range(n)]
        ax.set_xticks(ticks, [str(w) for w in order], fontsize=7 if n > 24 else 9,
                      rotation=90 if n > 24 else 0)
        ax.set_yticks(ticks, [str(w) for w in order], fontsize=7 if n > 24 else 9)
    ax.set_xlabel("receiver (world rank" + (", binned" if binned else "") + ")")
    ax.set_ylabel("sender (world rank" + (", binned" if binned else "") + ")")
    share = 100.0 * crossing / total if total else 0.0
    unit = "messages" if messages else "bytes"
    ax.set_title(f"{title}\n{n} ranks; crossing sites: {crossing:,} of {total:,} {unit} "
                 f"({share:.1f} %)", fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=120)
    except OSError as e:
        raise Bad(f"{out}: {e.strerror}") from None
    finally:
        plt.close(fig)
    return crossing, total


def main(argv):
    ap = argparse.ArgumentParser(
        prog=PROG, description="Draw a communication matrix (zipper-run --profile) as a heat "
        "map with each site's block outlined (docs/placement.md).",
        epilog="Exit status: 0 picture written; 1 a file could not be read, parsed or written, "
        "or matplotlib is missing; 2 usage.")
    ap.add_argument("matrix", metavar="MATRIX", help="communication matrix (zipper-comm-matrix JSON)")
    ap.add_argument("-o", "--output", metavar="PNG", required=True, help="picture to write")
    ap.add_argument("--map", metavar="MAP", help="draw the sites of this rank map (zipper-place's "
                    "zipper-rank-map JSON) instead of the profiled run's (default: the run's)")
    ap.add_argument("--messages", action="store_true",
                    help="colour by messages instead of bytes (default: bytes)")
    ap.add_argument("--title", metavar="TEXT", help="title (default: the matrix's file name)")
    ap.add_argument("--max-cells", metavar="N", type=int, default=512,
                    help="most cells per side; more ranks are binned (default: %(default)s)")
    ap.add_argument("--version", action="version", version=f"{PROG} {VERSION}")
    a = ap.parse_args(argv)
    if a.max_cells < 1:
        ap.error("--max-cells must be at least 1")
    try:
        names, site_of, rows = load_matrix(a.matrix)
        if a.map:
            site_of = load_map(a.map, names, len(site_of))
        title = a.title or (a.matrix + (f" under {a.map}" if a.map else ""))
        crossing, total = draw(names, site_of, rows, a.output, a.messages, title, a.max_cells)
    except Bad as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    unit = "messages" if a.messages else "bytes"
    print(f"wrote {a.output} ({len(site_of)} ranks, {crossing} of {total} {unit} crossing sites)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
