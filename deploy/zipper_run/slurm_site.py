"""The site's Slurm configuration for zipper: bridge nodes, their addresses and host keys.

A TOML file (docs/slurm.md; deploy/slurm/slurm.toml is the installed
example), found at --slurm-site FILE, else $ZIPPER_SLURM_SITE, else
/etc/zipper/slurm.toml (prefix /usr) or PREFIX/etc/zipper/slurm.toml:

    mpi = "pmix"                       # srun --mpi type (default: pmix)

    [bridges.bridge01]                 # one table per bridge node, by Slurm node name
    a = "10.201.0.254:7470"            # its zipperd service as cluster A's nodes reach it
    b = "10.202.0.254:7470"            # ... and as cluster B's nodes reach it
    key = "64 hex digits"              # that zipperd's host key (zipperd --print-host-key)
    job_a = "10.201.0.254:7471"        # a per-job zipperd (hetjob component 2) listens here
    job_b = "10.202.0.254:7471"

    [cluster_a]                        # optional: cluster A's nodes and partitions, so that
    nodes = "clusterA[1-64]"           # components given in the wrong order are refused
    partitions = ["a"]                 # before any rank starts
    [cluster_b]
    nodes = "clusterB[1-64]"
    partitions = ["b"]

Bridge nodes serving with a key are the job's forwarders unless the job has
a component 2; nodes of component 2 must have job_a/job_b. The file must be
a regular file that only its owner (the user or root) may write, since it
decides which host keys the ranks trust.
"""

import os
import re
import stat
import tomllib
from dataclasses import dataclass

from . import addresses
from .errors import Fatal
from .slurm_allocations import expand_hostlist

_KEY = re.compile(r"[0-9a-f]{64}")


@dataclass
class SiteBridge:
    """One bridge node of the site configuration."""

    node: str
    a: addresses.Address = None  # service address from cluster A (None: no service)
    b: addresses.Address = None
    key: str = ""  # host key of the service (64 hex digits) or ""
    job_a: addresses.Address = None  # where a per-job zipperd listens
    job_b: addresses.Address = None


@dataclass
class SiteCluster:
    """Which nodes and partitions belong to one cluster (empty: not said)."""

    nodes: list  # node names (the hostlist expanded)
    partitions: list


@dataclass
class Site:
    path: str
    mpi: str
    bridges: list  # [SiteBridge], in file order
    clusters: dict = None  # {"A": SiteCluster, "B": SiteCluster}, those the file names
    missing: bool = False  # no file at path (and none was asked for)

    def bridge(self, node):
        return next((b for b in self.bridges if b.node == node), None)


def default_path(self_dir):
    """$ZIPPER_SLURM_SITE, else where the install put the example: /etc/zipper
    for the /usr prefix (the package), PREFIX/etc/zipper otherwise."""
    env = os.environ.get("ZIPPER_SLURM_SITE")
    if env:
        return env
    prefix = os.path.normpath(os.path.join(self_dir, ".."))
    etc = "/etc" if prefix == "/usr" else os.path.join(prefix, "etc")
    return os.path.join(etc, "zipper", "slurm.toml")


def _addr(path, node, key, value):
    if value is None:
        return None
    a = addresses.parse_addr(str(value)) if isinstance(value, str) else None
    if a is None:
        raise Fatal(f"{path}: bridges.{node}.{key} must be '[tcp:|verbs:]HOST:PORT', got {value!r}")
    return a


def parse(text, path="<site>"):
    """Site from TOML text; Fatal naming the key at fault."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise Fatal(f"{path}: {e}") from None
    unknown = set(doc) - {"mpi", "bridges", "cluster_a", "cluster_b"}
    if unknown:
        raise Fatal(f"{path}: unknown key '{sorted(unknown)[0]}'")
    mpi = doc.get("mpi", "")
    if not isinstance(mpi, str) or not re.fullmatch(r"[a-z0-9_]*", mpi):
        raise Fatal(f"{path}: mpi must be an srun --mpi type such as \"pmix\" or \"pmi2\"")
    bridges = []
    tables = doc.get("bridges", {})
    if not isinstance(tables, dict):
        raise Fatal(f"{path}: bridges must be a table of tables")
    for node, t in tables.items():
        if not isinstance(t, dict):
            raise Fatal(f"{path}: bridges.{node} must be a table")
        bad = set(t) - {"a", "b", "key", "job_a", "job_b"}
        if bad:
            raise Fatal(f"{path}: bridges.{node}: unknown key '{sorted(bad)[0]}'")
        key = t.get("key", "")
        if key and not (isinstance(key, str) and _KEY.fullmatch(key)):
            raise Fatal(f"{path}: bridges.{node}.key must be 64 lowercase hex digits")
        b = SiteBridge(node, _addr(path, node, "a", t.get("a")), _addr(path, node, "b", t.get("b")), key,
                       _addr(path, node, "job_a", t.get("job_a")), _addr(path, node, "job_b", t.get("job_b")))
        if (b.a is None) != (b.b is None) or (b.job_a is None) != (b.job_b is None):
            raise Fatal(f"{path}: bridges.{node} needs both a and b (and both job_a and job_b)")
        bridges.append(b)
    clusters = {}
    for c in ("A", "B"):
        t = doc.get(f"cluster_{c.lower()}")
        if t is not None:
            clusters[c] = _cluster(path, f"cluster_{c.lower()}", t)
    return Site(path, mpi, bridges, clusters)


def _cluster(path, name, t):
    if not isinstance(t, dict) or set(t) - {"nodes", "partitions"}:
        raise Fatal(f"{path}: {name} must be a table of 'nodes' (a Slurm host list) and 'partitions'")
    nodes, parts = t.get("nodes", ""), t.get("partitions", [])
    if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
        raise Fatal(f"{path}: {name}.partitions must be a list of partition names")
    expanded = expand_hostlist(nodes) if isinstance(nodes, str) and nodes else None
    if nodes and expanded is None:
        raise Fatal(f"{path}: {name}.nodes must be a Slurm host list such as \"node[001-064]\", got {nodes!r}")
    return SiteCluster(expanded or [], parts)


def load(path, required):
    """Site from `path`; an empty Site when it is absent and not `required`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        if required:
            raise Fatal(f"--slurm-site: '{path}' does not exist") from None
        return Site(path, "", [], {}, missing=True)
    except OSError as e:
        raise Fatal(f"site configuration '{path}': {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (0, os.geteuid()) or st.st_mode & 0o022:
            raise Fatal(f"site configuration '{path}' must be a regular file of root or this user "
                        "that nobody else may write")
        text = f.read().decode("utf-8", errors="replace")
    return parse(text, path)
