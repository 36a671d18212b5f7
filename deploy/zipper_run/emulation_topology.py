"""The emulated clusters' topology, written once: the names and addresses that
zipper-emulate builds (emulation_build.py) and zipper-run and zipper-netns-rsh use.

Namespaces: clusterA<i> / clusterB<i> (nodes), and the bridge nodes: `zipper`
when there is one, zipper1..zipperK when there are K > 1. Bridge node i
(1-based) has 10.201.0.(255-i) on zA and 10.202.0.(255-i) on zB.
Each node namespace has a cgroup of the same name (emulation_cgroups.py).
"""

import os
import re

from .cpus import ncpus

NETNS_DIR = "/run/netns"
# The bridge node of a one-bridge emulation; with K > 1 bridge nodes
# zipper1..zipperK, and the Linux bridges brA/brB in FABRIC_NS.
ZNS = "zipper"
FABRIC_NS = "zfabric"
SUBNET = {"A": "10.201.0", "B": "10.202.0"}


def state_dir():
    return os.environ.get("ZIPPER_EMULATE_STATE_DIR") or "/run/zipper-emulate"


def netns_exists(name):
    return os.path.exists(os.path.join(NETNS_DIR, name))


def node_ns(cluster, i):
    """Namespace of node i (1-based) of cluster "A" or "B"."""
    return f"cluster{cluster}{i}"


def node_addr(cluster, i):
    """Address of node i (1-based) on its cluster's subnet (/24)."""
    return f"{SUBNET[cluster]}.{i}"


def built_zipper_ns(i, k):
    """Namespace that `zipper-emulate up --zippers k` makes for bridge node i."""
    return ZNS if k == 1 else f"zipper{i}"


def bridge_ns(k):
    """Namespace that holds the bridges brA/brB with k bridge nodes."""
    return ZNS if k == 1 else FABRIC_NS


def infra_namespaces(k):
    """The namespaces besides the nodes, with k bridge nodes."""
    return [ZNS] if k == 1 else [FABRIC_NS] + [built_zipper_ns(j, k) for j in range(1, k + 1)]


def namespaces(nodes_a, nodes_b, k):
    """Every namespace of an emulation of nodes_a + nodes_b nodes and k bridge nodes."""
    return ({node_ns("A", i) for i in range(1, nodes_a + 1)}
            | {node_ns("B", i) for i in range(1, nodes_b + 1)} | set(infra_namespaces(k)))


def is_ours(ns):
    """Whether a namespace name is one the emulation makes."""
    return ns in (ZNS, FABRIC_NS) or bool(re.fullmatch(r"(cluster[AB]|zipper)[0-9]+", ns))


def count_nodes(cluster):
    """Contiguous emulated nodes cluster<cluster>1, 2, ... that exist."""
    i = 0
    while netns_exists(node_ns(cluster, i + 1)):
        i += 1
    return i


def zipper_ns(i, k):
    """Namespace of bridge node i (1-based) for a run with k: `zipper` in a
    one-bridge emulation, else zipper<i> (a run may use the first k bridge
    nodes of a larger emulation); before the emulation exists, what
    `zipper-emulate up --zippers k` makes."""
    if i == 1 and netns_exists(ZNS):
        return ZNS
    if netns_exists(f"zipper{i}"):
        return f"zipper{i}"
    return built_zipper_ns(i, k)


def zipper_addr(cluster, i):
    """Address of bridge node i (1-based) on cluster A's or B's subnet."""
    return f"{SUBNET[cluster]}.{255 - i}"


def count_zippers():
    """Bridge nodes of the emulation that is up: 1 (`zipper`), K (zipper1..K), or 0."""
    if netns_exists(ZNS):
        return 1
    k = 0
    while netns_exists(f"zipper{k + 1}"):
        k += 1
    return k


def cpu_for_host(host):
    """CPU for an emulated node, or None if it is not pinned.

    The node index i is the trailing number of HOST and the letter before it
    names the cluster: A<i> -> (i-1) mod ncpus, B<i> (and others) -> i mod
    ncpus, so that A1 and B1 run on different cores of a 2-core machine.
    """
    m = re.search(r"([A-Za-z]?)([0-9]+)$", host)
    if not m:
        return None
    idx, n = int(m.group(2)), ncpus()
    return (idx + n - 1) % n if m.group(1) in ("A", "a") else idx % n
