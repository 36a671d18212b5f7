"""zipper-emulate's command line (up, down, status, check): the emulated
two-cluster topology of docs/launch-contract.md, built and removed by
emulation_build (whose docstring draws the namespaces, bridges and addresses).
"""

import os
import re
import shutil
import signal
import subprocess
import sys

from .emulation_build import (TBF_BURST, TBF_LATENCY, build_cluster, check_not_busy, do_down, new_netns,
                              no_forwarding, our_netns, read_state, topology_matches, write_state)
from .emulation_cgroups import make_cgroups
from .emulation_lock import Lock
from .emulation_shell import PROG, Error, info, need_cmd, need_root, run_opt
from .emulation_topology import FABRIC_NS, ZNS, infra_namespaces, netns_exists, state_dir

MAX_NODES = 250
MAX_ZIPPERS = 16


USAGE = f"""\
Usage: {PROG} COMMAND [OPTIONS]

Build the emulated two-cluster topology used by zipper-run (see
docs/launch-contract.md): netns '{ZNS}' with bridges brA/brB and NICs
zA 10.201.0.254/24 and zB 10.202.0.254/24 (ip_forward=0, no routes between
the subnets), node namespaces clusterA1..N (eth0 10.201.0.<i>/24) and
clusterB1..M (eth0 10.202.0.<i>/24). With --zippers K > 1: K bridge nodes
zipper1..zipperK, zipper<j> dual-homed with zA 10.201.0.<255-j> and
zB 10.202.0.<255-j>, and the bridges in netns '{FABRIC_NS}'.

Commands:
  up [--nodes-a N] [--nodes-b M] [--zippers K] [--rate-a RATE] [--rate-b RATE]
     [--rate-zipper RATE] [--force]
        Create the topology (default: 1 node per cluster, 1 bridge node, no
        shaping). RATE is a tc rate such as 1gbit or 500mbit; it installs
        'tbf rate RATE burst {TBF_BURST} latency {TBF_LATENCY}' on every node's eth0,
        on the bridge port facing each node and on zA/zB. --rate-zipper
        shapes each bridge node's ports instead, both ways (zA/zB and the
        bridge ports facing them), so that they can be slower than the
        clusters. Each node namespace gets a cgroup with an equal CPU share
        (cgroup v2 cpu controller, else cgroup v1 cpu); without either,
        zipper-run falls back to a session per mpirun.
        Idempotent: does nothing if the same topology is already up,
        tears down and rebuilds if it differs.
  down [--force]
        Remove the namespaces, the node cgroups and the state file (no error
        if absent).
  Neither up nor down tears down namespaces in which processes still run
  (e.g. another user's mpirun) unless --force is given.
  status
        Print the topology. Exit 0 if it is up, 3 if it is not.
  check Exit 0 if this machine can build namespaces; otherwise print a
        one-line reason and exit 77 (the automake/ctest 'skip' code).
  -h, --help
        Show this help.

State is recorded in STATE_DIR/state, STATE_DIR being $ZIPPER_EMULATE_STATE_DIR
or /run/zipper-emulate.
"""


def valid_rate(r):
    # tc itself does the final validation.
    return bool(re.fullmatch(r"[0-9]+(\.[0-9]+)?([kKmMgGtT]i?)?(bit|bps)?", r))


def valid_count(v, most):
    return bool(re.fullmatch(r"[1-9][0-9]*", v)) and int(v) <= most


# ---------------------------------------------------------------- commands
def parse_opts(args, valued, flags):
    """--opt VALUE / --opt=VALUE for `valued`, bare `flags`; returns a dict."""
    out = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-h", "--help"):
            print(USAGE, end="")
            sys.exit(0)
        name, eq, val = a.partition("=")
        if name in valued:
            if not eq:
                if i + 1 >= len(args):
                    raise Error(f"option {a} needs a value")
                i += 1
                val = args[i]
            out[name] = val
        elif a in flags:
            out[a] = True
        else:
            raise Error(f"unknown argument '{a}' (see --help)")
        i += 1
    return out


def cmd_up(args):
    o = parse_opts(args, ("--nodes-a", "--nodes-b", "--rate-a", "--rate-b", "--zippers", "--rate-zipper"),
                   ("--force",))
    cfg = {"NODES_A": o.get("--nodes-a", "1"), "NODES_B": o.get("--nodes-b", "1"),
           "RATE_A": o.get("--rate-a", ""), "RATE_B": o.get("--rate-b", ""),
           "ZIPPERS": o.get("--zippers", "1"), "RATE_ZIPPER": o.get("--rate-zipper", "")}
    for opt, key in (("--nodes-a", "NODES_A"), ("--nodes-b", "NODES_B")):
        if not valid_count(cfg[key], MAX_NODES):
            raise Error(f"{opt} must be an integer in 1..{MAX_NODES}, got '{cfg[key]}'")
    for opt, key in (("--rate-a", "RATE_A"), ("--rate-b", "RATE_B"), ("--rate-zipper", "RATE_ZIPPER")):
        if cfg[key] and not valid_rate(cfg[key]):
            raise Error(f"{opt}: '{cfg[key]}' is not a tc rate (e.g. 1gbit, 500mbit)")
    if not valid_count(cfg["ZIPPERS"], MAX_ZIPPERS):
        raise Error(f"--zippers must be an integer in 1..{MAX_ZIPPERS}, got '{cfg['ZIPPERS']}'")
    na, nb, k = int(cfg["NODES_A"]), int(cfg["NODES_B"]), int(cfg["ZIPPERS"])
    if na + k > 254 or nb + k > 254:  # nodes use .1..N, bridge nodes .254 downwards
        raise Error("--nodes-a/--nodes-b plus --zippers must stay below 255 addresses")
    need_root()
    need_cmd("ip")
    if cfg["RATE_A"] or cfg["RATE_B"] or cfg["RATE_ZIPPER"]:
        need_cmd("tc")
    with Lock():
        if topology_matches(cfg):
            # Up already (perhaps built by an older zipper-emulate): make the
            # node cgroups if they are missing.
            nodes = [ns for ns in our_netns() if ns != FABRIC_NS]
            st = read_state()
            if not st["CGROUP"] or not all(os.path.isdir(os.path.join(st["CGROUP"], n)) for n in nodes):
                write_state(cfg, make_cgroups(nodes))
            return 0
        if our_netns() or os.path.exists(os.path.join(state_dir(), "state")):
            check_not_busy(o.get("--force"), "rebuild the emulation (it differs from the requested one)")
            info("existing emulation differs from the requested one; rebuilding")
            if not do_down():
                raise Error("could not remove the old emulation")
        try:
            for ns in infra_namespaces(k):
                new_netns(ns)
                no_forwarding(ns)
            build_cluster("A", na, cfg["RATE_A"], k, cfg["RATE_ZIPPER"])
            build_cluster("B", nb, cfg["RATE_B"], k, cfg["RATE_ZIPPER"])
            cgroup = make_cgroups([ns for ns in our_netns() if ns != FABRIC_NS])
            write_state(cfg, cgroup)
        except BaseException:
            info("build failed; removing partial topology")
            do_down()
            raise
    zs = ZNS if k == 1 else f"zipper1..{k}"
    extra = "".join(s for s in (
        f", A shaped to {cfg['RATE_A']}" if cfg["RATE_A"] else "",
        f", B shaped to {cfg['RATE_B']}" if cfg["RATE_B"] else "",
        f", bridge nodes shaped to {cfg['RATE_ZIPPER']}" if cfg["RATE_ZIPPER"] else "",
        f", node cgroups in {cgroup}" if cgroup else ""))
    info(f"up: {zs} + clusterA1..{na} + clusterB1..{nb}{extra}")
    return 0


def cmd_down(args):
    o = parse_opts(args, (), ("--force",))
    need_root()
    need_cmd("ip")
    with Lock():
        check_not_busy(o.get("--force"), "remove the emulation")
        if not do_down():
            raise Error("some namespaces could not be removed")
    return 0


def _print_ns(ns):
    print(f"  {ns}")
    r = subprocess.run(["ip", "-n", ns, "-br", "addr", "show"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    for line in r.stdout.splitlines():
        if not line.startswith("lo "):
            print(f"    {line}")
    if shutil.which("tc"):
        r = subprocess.run(["tc", "-n", ns, "qdisc", "show"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        for line in r.stdout.splitlines():
            if " tbf " in line:
                print(f"    {line}")


def cmd_status(args):
    if args:
        if args[0] in ("-h", "--help"):
            print(USAGE, end="")
            return 0
        raise Error("status takes no arguments")
    need_cmd("ip")
    nss = our_netns()
    state = os.path.join(state_dir(), "state")
    if not nss:
        print("emulation: down (no zipper/cluster namespaces)")
        if os.path.exists(state):
            print(f"warning: stale state file {state}")
        return 3
    st = read_state()
    if st:
        print(f"emulation: up (state {state})")
        print(f"  cluster A: {st['NODES_A']} node(s), rate {st['RATE_A'] or 'unshaped'}")
        print(f"  cluster B: {st['NODES_B']} node(s), rate {st['RATE_B'] or 'unshaped'}")
        print(f"  bridge nodes: {st['ZIPPERS']}, rate {st['RATE_ZIPPER'] or 'as the clusters'}")
        print(f"  node cgroups: {st['CGROUP'] or 'none (a session per mpirun instead)'}")
        if not topology_matches(st):
            print(f"warning: namespaces do not match the state file; run '{PROG} up' to rebuild")
    else:
        print(f"emulation: namespaces present but no state file (not built by {PROG} up?)")
    for brns in (ZNS, FABRIC_NS):
        if not netns_exists(brns):
            continue
        r = subprocess.run(["ip", "netns", "exec", brns, "cat", "/proc/sys/net/ipv4/ip_forward"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        print(f"  {brns}: ip_forward={r.stdout.strip() or '?'}")
        r = subprocess.run(["ip", "-n", brns, "-o", "link", "show", "type", "bridge_slave"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in r.stdout.splitlines():
            m = re.match(r"^[0-9]+: ([^:@]+)(@[^:]*)?:.* master ([^ ]+)", line)
            if m:
                print(f"    bridge port {m.group(1)} -> {m.group(3)}")
    print("namespaces:")
    for ns in nss:
        _print_ns(ns)
    return 0


def cmd_check(args):
    if args:
        if args[0] in ("-h", "--help"):
            print(USAGE, end="")
            return 0
        raise Error("check takes no arguments")

    def no(why):
        print(f"{PROG}: cannot emulate: {why}")
        return 77

    for c in ("ip", "unshare", "taskset"):
        if not shutil.which(c):
            return no(f"command '{c}' not found")
    if os.geteuid() != 0:
        return no("not root")
    if subprocess.run(["ip", "netns", "list"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        return no("'ip netns list' fails")
    t = f"zipper-check-{os.getpid()}"

    def attempt(argv):
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.returncode == 0, r.stdout.strip().replace("\n", " ")

    ok, err = attempt(["ip", "netns", "add", t])
    if not ok:
        return no(f"'ip netns add' fails: {err}")
    try:
        for argv, what in ((["ip", "-n", t, "link", "add", "zc0", "type", "veth", "peer", "name", "zc1"],
                            "cannot create veth"),
                           (["ip", "-n", t, "link", "add", "zcbr", "type", "bridge"], "cannot create bridge"),
                           (["ip", "netns", "exec", t, "unshare", "--uts", "true"],
                            "'ip netns exec' / 'unshare --uts' fails")):
            ok, err = attempt(argv)
            if not ok:
                return no(f"{what}: {err}")
    finally:
        run_opt("ip", "netns", "delete", t)
    print("ok: network namespaces, veth and bridges are usable")
    return 0


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `zipper-emulate status | head`
    if not argv:
        print(USAGE, end="", file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    commands = {"up": cmd_up, "down": cmd_down, "status": cmd_status, "check": cmd_check}
    if cmd in ("-h", "--help", "help"):
        print(USAGE, end="")
        return 0
    if cmd not in commands:
        print(f"{PROG}: error: unknown command '{cmd}'", file=sys.stderr)
        print(USAGE, end="", file=sys.stderr)
        return 2
    try:
        return commands[cmd](args)
    except Error as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
