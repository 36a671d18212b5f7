"""Building and removing the emulated clusters: network namespaces, veth
pairs, Linux bridges, tc shaping, and the state file that records them.

netns zipper       brA, brB (bridges); zA 10.201.0.254/24, zB 10.202.0.254/24
                       (veth, peers zA-br / zB-br are bridge ports); ip_forward=0
    netns clusterA<i>  eth0 10.201.0.<i>/24, peer vA<i> is a port on brA
    netns clusterB<i>  eth0 10.202.0.<i>/24, peer vB<i> is a port on brB

With --zippers K > 1 the bridges move to netns zfabric and netns zipper<j>
(j = 1..K) holds zA 10.201.0.<255-j>/24 and zB 10.202.0.<255-j>/24 (peers
zA<j>-br / zB<j>-br are bridge ports). There are no cross-subnet routes, so A
and B talk only through a user-space process (zipperd) in a zipper namespace.
Every node namespace gets a cgroup with an equal CPU share where the machine
allows it (cgroup v2 cpu controller, else the cgroup v1 cpu hierarchy).
"""

import datetime
import os
import re
import subprocess

from . import emulation_topology as topo
from .emulation_cgroups import remove_cgroups
from .emulation_shell import Error, info, run, run_opt
from .emulation_topology import bridge_ns, built_zipper_ns, is_ours, state_dir

STATE_VERSION = "1"
TBF_BURST = "256kb"
TBF_LATENCY = "50ms"


def our_netns():
    """The emulation's namespaces that exist."""
    try:
        names = os.listdir(topo.NETNS_DIR)
    except OSError:
        return []
    return sorted((n for n in names if is_ours(n)), key=_natural)


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"([0-9]+)", s)]


# ---------------------------------------------------------------- state file
FIELDS = ("NODES_A", "NODES_B", "RATE_A", "RATE_B", "ZIPPERS", "RATE_ZIPPER", "CGROUP")


def read_state():
    """The state file as a dict (a state without ZIPPERS is a one-bridge one), or None."""
    try:
        with open(os.path.join(state_dir(), "state")) as f:
            st = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    except OSError:
        return None
    st.setdefault("ZIPPERS", "1")
    for k in FIELDS:
        st.setdefault(k, "")
    return st


def write_state(cfg, cgroup):
    path = os.path.join(state_dir(), "state")
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"VERSION={STATE_VERSION}\n")
        for k in FIELDS[:-1]:
            f.write(f"{k}={cfg[k]}\n")
        f.write(f"CGROUP={cgroup}\n")
        f.write(f"CREATED={datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%SZ')}\n")
    os.replace(tmp, path)


def topology_matches(cfg):
    """Is exactly the requested topology up? (cheap: the state and a few ip calls)"""
    st = read_state()
    if not st or st.get("VERSION") != STATE_VERSION or any(st[k] != cfg[k] for k in FIELDS[:-1]):
        return False
    na, nb, k = int(cfg["NODES_A"]), int(cfg["NODES_B"]), int(cfg["ZIPPERS"])
    if set(our_netns()) != topo.namespaces(na, nb, k):
        return False
    brns = bridge_ns(k)
    r = subprocess.run(["ip", "-n", brns, "-o", "link", "show"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0 or " brA:" not in r.stdout or " brB:" not in r.stdout:
        return False
    r = subprocess.run(["ip", "-n", built_zipper_ns(k, k), "-o", "link", "show"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return r.returncode == 0 and " zA@" in r.stdout and " zB@" in r.stdout


# ---------------------------------------------------------------- build
def new_netns(ns):
    run("ip", "netns", "add", ns)
    run("ip", "-n", ns, "link", "set", "lo", "up")
    # No IPv6: keeps the links quiet (no router solicitations, MLD) and makes
    # sure nothing sneaks across the zipper via link-local addresses.
    run_opt("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
    run_opt("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1")


def no_forwarding(ns):
    run("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=0")
    run_opt("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.forwarding=0")


def shape(ns, dev, rate):
    if rate:
        run("tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate,
            "burst", TBF_BURST, "latency", TBF_LATENCY)


def build_cluster(c, n, rate, k, rate_zipper):
    br = f"br{c}"
    brns = bridge_ns(k)
    run("ip", "-n", brns, "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0")
    run("ip", "-n", brns, "link", "set", br, "up")
    # Each zipper's own NIC: veth zX <-> zX-br (k = 1) or zX<j>-br, a bridge port.
    for j in range(1, k + 1):
        zns = built_zipper_ns(j, k)
        port = f"z{c}-br" if k == 1 else f"z{c}{j}-br"
        if k == 1:
            run("ip", "-n", zns, "link", "add", f"z{c}", "type", "veth", "peer", "name", port)
        else:
            run("ip", "-n", brns, "link", "add", port, "type", "veth", "peer", "name", f"z{c}",
                "netns", zns)
        run("ip", "-n", brns, "link", "set", port, "master", br)
        run("ip", "-n", brns, "link", "set", port, "up")
        run("ip", "-n", zns, "addr", "add", f"{topo.zipper_addr(c, j)}/24", "dev", f"z{c}")
        run("ip", "-n", zns, "link", "set", f"z{c}", "up")
        if rate_zipper:
            shape(zns, f"z{c}", rate_zipper)  # zipper -> net
            shape(brns, port, rate_zipper)  # net -> zipper
        else:
            shape(zns, f"z{c}", rate)
    for i in range(1, n + 1):
        ns, port = topo.node_ns(c, i), f"v{c}{i}"
        new_netns(ns)
        run("ip", "-n", brns, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
        run("ip", "-n", brns, "link", "set", port, "master", br)
        run("ip", "-n", brns, "link", "set", port, "up")
        run("ip", "-n", ns, "addr", "add", f"{topo.node_addr(c, i)}/24", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        shape(ns, "eth0", rate)  # node -> net
        shape(brns, port, rate)  # net -> node


# ---------------------------------------------------------------- teardown
def busy_procs():
    """(pid, comm) of processes running inside any of our namespaces."""
    pids = set()
    for ns in our_netns():
        r = subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        pids |= {int(p) for p in r.stdout.split() if p.isdigit()}
    pids.discard(os.getpid())
    out = []
    for p in sorted(pids):
        try:
            comm = open(f"/proc/{p}/comm").read().strip()
        except OSError:
            comm = "?"
        out.append((p, comm))
    return out


def check_not_busy(force, what):
    """Refuse to tear down namespaces that are in use, unless --force."""
    if force:
        return
    procs = busy_procs()
    if procs:
        shown = ",".join(f"{p} {c}" for p, c in procs[:5]) + (", ..." if len(procs) > 5 else "")
        raise Error(f"cannot {what}: {len(procs)} process(es) still run in the emulated namespaces "
                    f"({shown}); wait for them or use --force (they keep running in detached namespaces)")


def do_down():
    failed = False
    for ns in our_netns():
        r = subprocess.run(["ip", "netns", "delete", ns], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        # It may have vanished meanwhile; only complain if it is still there.
        if r.returncode != 0 and topo.netns_exists(ns):
            info(f"could not delete netns {ns}")
            failed = True
    remove_cgroups()
    try:
        os.unlink(os.path.join(state_dir(), "state"))
    except FileNotFoundError:
        pass
    return not failed
