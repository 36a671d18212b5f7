"""zipper-run --rank-map FILE: the rank map zipper-place writes (format
"zipper-rank-map", docs/placement.md), checked and handed to every rank as
MMPI_RANK_MAP, from which libmmpi makes MPI_COMM_WORLD rank w the process
that runs where the map says (client/world_placement.h).

MMPI_RANK_MAP: each cluster's MPI_COMM_WORLD ranks, cluster A first,
clusters separated by ';', each ascending as comma-separated ranks or
ranges 'a-b': "0-3,8-11;4-7,12-15".
"""

import json

from .errors import Fatal

FORMAT, VERSION = "zipper-rank-map", 1
CLUSTERS = ("A", "B")
# Linux refuses a single environment string over 128 KiB (MAX_ARG_STRLEN) at
# exec: beyond this the map cannot reach the ranks.
MAX_ENV_BYTES = 120 * 1024


def read(path):
    """The map in `path` as [ranks of A, ranks of B] (each ascending), or
    Fatal naming the file and the fault."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise Fatal(f"--rank-map {path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise Fatal(f"--rank-map {path}: not JSON ({e})") from None
    return parse(doc, path)


def parse(doc, path="the rank map"):
    """[ranks of A, ranks of B] from the parsed JSON `doc`; Fatal on a fault."""
    def bad(what):
        return Fatal(f"--rank-map {path}: {what}")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise bad(f'not a rank map (format is not "{FORMAT}")')
    if doc.get("version") != VERSION:
        raise bad(f"rank map version {doc.get('version')!r}; this zipper-run reads version {VERSION}")
    sites = doc.get("sites")
    if not isinstance(sites, list) or [s.get("name") if isinstance(s, dict) else None
                                       for s in sites] != list(CLUSTERS):
        raise bad("its sites must be A and B, in that order (zipper-run's two clusters)")
    out = []
    for s in sites:
        ranks = s.get("ranks")
        if (not isinstance(ranks, list) or not ranks
                or not all(isinstance(r, int) and not isinstance(r, bool) for r in ranks)):
            raise bad(f"site {s['name']}: 'ranks' must be a non-empty list of integers")
        if any(b <= a for a, b in zip(ranks, ranks[1:])):
            raise bad(f"site {s['name']}: ranks are not ascending")
        out.append(ranks)
    n = sum(len(r) for r in out)
    if sorted(out[0] + out[1]) != list(range(n)):
        raise bad(f"every rank 0..{n - 1} must be in exactly one site")
    return out


def _ranges(ranks):
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ",".join(parts)


def env_value(sites):
    """MMPI_RANK_MAP's value for [ranks of A, ranks of B]; Fatal when it is
    too long for the environment."""
    text = ";".join(_ranges(r) for r in sites)
    if len(text) > MAX_ENV_BYTES:
        raise Fatal(f"--rank-map: the map takes {len(text)} bytes as MMPI_RANK_MAP, more than "
                    f"the {MAX_ENV_BYTES} an environment variable may hold")
    return text


def is_block_order(sites):
    """True when the map is the launcher's default (A holds 0..x-1)."""
    return sites[0] == list(range(len(sites[0])))
