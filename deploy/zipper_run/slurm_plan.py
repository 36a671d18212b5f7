"""Where the forwarders of a --slurm run are: a per-job zipperd on every node
of hetjob component 2, --forwarder-a/-b, or the site's zipperd services
(slurm_site.py), with the host keys the ranks pin."""

from . import probe, site_keys, zipperd
from .errors import Fatal


class Plan:
    """The bridge nodes of the run: addresses per side, pinned keys, who starts them."""

    def __init__(self):
        self.nodes = []  # bridge node names (or the addresses given)
        self.fwd_a = []  # [Address]
        self.fwd_b = []
        self.keys = None  # [hex] in order, or None (the site's known_forwarders pins)
        self.per_job = None  # Component of the per-job zipperd step


def _site_pins(o, p, self_dir):
    """Keys for forwarders zipper-run does not start and the site file gives
    no key for: --forwarder-keys, else the ranks' own pins (MMPI_FORWARDER_KEYS,
    known_forwarders); Fatal when nothing pins them (site_keys)."""
    brs = [zipperd.Bridge(i, a, b) for i, (a, b) in enumerate(zip(p.fwd_a, p.fwd_b), 1)]
    return site_keys.keys_for(o, brs, self_dir)


def check_components(comps, site, x, y):
    """Before any rank starts: Fatal in zipper's words when -x/-y ask for
    more ranks than a cluster's allocation has tasks, or when a component
    holds nodes (or is in a partition) that the site configuration puts in
    the other cluster (components given in the wrong order)."""
    for c, n, opt in (("A", x, "-x"), ("B", y, "-y")):
        comp = comps[c]
        if n > comp.ntasks:
            raise Fatal(f"--slurm: {opt} {n} asks for more ranks than the {comp.ntasks} task(s) of cluster "
                        f"{c}'s allocation ({comp.describe()}): ask for at most {comp.ntasks}, or allocate more")
    known = site.clusters or {}
    for c in ("A", "B"):
        comp, other = comps[c], "B" if c == "A" else "A"
        what = (f"component {comp.het_group}" if comp.het_group >= 0 else f"job {comp.job_id}") + \
            f" (cluster {c}'s ranks)"
        mine, theirs = known.get(c), known.get(other)
        for node in comp.nodes:
            if (theirs and node in theirs.nodes) or (mine and mine.nodes and node not in mine.nodes):
                where = f"cluster {other}'s" if theirs and node in theirs.nodes else f"not cluster {c}'s"
                raise Fatal(f"--slurm: {what} has node {node}, which the site configuration ({site.path}) "
                            f"names {where}: components in the wrong order? cluster A is component 0 "
                            "(salloc -p A ... : -p B ...)")
        part = comp.partition
        if part and ((theirs and part in theirs.partitions) or (mine and mine.partitions and part not in mine.partitions)):
            raise Fatal(f"--slurm: {what} is in partition {part}, which the site configuration ({site.path}) "
                        f"does not give cluster {c}: components in the wrong order? cluster A is component 0 "
                        "(salloc -p A ... : -p B ...)")


def plan_bridges(o, comps, site, self_dir=""):
    """Where the forwarders are (Plan); Fatal when there are none, the
    site configuration lacks what the job needs (or is missing), or a site
    zipperd's key is pinned nowhere."""
    if site.missing and not o.fwd_a:
        raise Fatal(f"--slurm: no site configuration: '{site.path}' does not exist; it names the bridge "
                    "nodes (docs/slurm.md): give --slurm-site FILE or set $ZIPPER_SLURM_SITE")
    p = Plan()
    if "bridge" in comps:
        comp = comps["bridge"]
        for node in comp.nodes:
            sb = site.bridge(node)
            if sb is None or sb.job_a is None:
                raise Fatal(f"--slurm: bridge node {node} (component 2) has no job_a/job_b addresses "
                            f"in the site configuration ({site.path})")
            p.nodes.append(node)
            p.fwd_a.append(sb.job_a)
            p.fwd_b.append(sb.job_b)
        p.per_job = comp
        return p
    if o.fwd_a:
        p.nodes = [a.text for a in o.fwd_a]
        p.fwd_a, p.fwd_b = list(o.fwd_a), list(o.fwd_b)
        p.keys = _site_pins(o, p, self_dir)
        return p
    serving = [b for b in site.bridges if b.a is not None]
    if not serving:
        raise Fatal(f"--slurm: no bridge nodes: none serving in the site configuration ({site.path}), "
                    "no hetjob component 2 and no --forwarder-a/-b")
    p.nodes = [b.node for b in serving]
    p.fwd_a = [b.a for b in serving]
    p.fwd_b = [b.b for b in serving]
    if all(b.key for b in serving):
        p.keys = [b.key for b in serving]
    else:
        p.keys = _site_pins(o, p, self_dir)
    return p


def check_reachable(p):
    """Every serving bridge node answers the zipper protocol from here (its
    cluster A address; its B address too when this host has a route to it).
    Fatal naming the first that does not."""
    for node, a, b in zip(p.nodes, p.fwd_a, p.fwd_b):
        va, da = zipperd.probe_addr("", a, 0)
        if va != probe.ZIPPERD:
            raise Fatal(f"bridge node {node} unreachable: no zipperd answers at {a.text} "
                        f"({da or 'not a zipperd'})")
        vb, db = zipperd.probe_addr("", b, 1)
        if vb == probe.OTHER or (vb == probe.NOTHING and "unreachable" not in db.lower()):
            raise Fatal(f"bridge node {node} unreachable: no zipperd answers at {b.text} ({db})")
