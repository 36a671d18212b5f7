"""zipper-netns-rsh: an "ssh" for Open MPI's rsh launcher (plm_rsh_agent) that
"logs in" to an emulated node, i.e. a network namespace made by zipper-emulate.

    zipper-netns-rsh [ssh options] HOST COMMAND...

runs  ip netns exec HOST unshare --uts taskset -c CPU sh -c "hostname HOST && COMMAND..."
in the node's cgroup (zipper-emulate makes one per node) and a session of its own.
"""

import os
import re
import sys

from . import emulation_cgroups, emulation_topology
from .shell_quote import quote_cmd

PROG = "zipper-netns-rsh"

USAGE = f"""\
Usage: {PROG} [ssh options] HOST COMMAND...

Open MPI plm_rsh_agent for the emulated clusters of zipper-emulate. HOST is a
network namespace name (clusterA1, clusterB2, ...). Runs

  ip netns exec HOST unshare --uts taskset -c CPU sh -c "hostname HOST && COMMAND..."

so each emulated node has its own network stack and hostname. ssh options
(-x, -T, -o OPT, -l USER, -p PORT, ...) are accepted and ignored; like ssh,
the COMMAND words are joined with spaces and run by sh.

CPU pinning: the node index i is the trailing number of HOST and the letter
before it names the cluster: cluster A nodes go to cpu (i-1) mod ncpus,
cluster B nodes (and others) to cpu i mod ncpus, with ncpus the machine's
CPU count. So on a 2-core machine A1 and B1 run on different cores. HOST
without a trailing number is not pinned.

CPU share: the command runs in HOST's cgroup when zipper-emulate made one
(cgroup v2: every emulated node gets an equal share), and always in a session
of its own.

Environment:
  ZIPPER_RSH_NO_PIN=1   do not pin (no taskset)
  ZIPPER_RSH_DEBUG=1    print the command to stderr before running it
  ZIPPER_RSH_ROOT=/proc/PID/root
                        where to find the node cgroups when this runs inside a
                        namespace whose /sys lacks them (set by zipper-run)

Exit status: that of COMMAND; 255 if HOST cannot be entered (as ssh).
"""

_WITH_ARG = set("BbcDEeFIiJLlmOopQRSWw")
_FLAGS = set("1246AaCfGgKkMNnqsTtVvXxYy")


def _fail(msg):
    """Like ssh: connection-level errors exit 255."""
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(255)


def main(argv):
    args = list(argv)
    while args:
        a = args[0]
        if a in ("-h", "--help"):
            print(USAGE, end="")
            return 0
        if a == "--":
            args.pop(0)
            break
        if len(a) >= 2 and a[0] == "-" and a[1] in _WITH_ARG:
            if len(a) == 2:
                if len(args) < 2:
                    _fail(f"option {a} needs an argument")
                del args[:2]
            else:
                args.pop(0)  # -oFoo=bar, -p22
            continue
        if len(a) >= 2 and a[0] == "-" and a[1] in _FLAGS:
            args.pop(0)
            continue
        if a.startswith("-"):
            _fail(f"unknown ssh option '{a}'")
        break
    if not args:
        print(USAGE, end="", file=sys.stderr)
        return 255
    host = args.pop(0).rsplit("@", 1)[-1]  # user@host: drop the user
    if not args:
        _fail(f"no command given for {host} (interactive login is not supported)")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", host):
        _fail(f"invalid host name '{host}'")
    if not emulation_topology.netns_exists(host):
        _fail(f"no network namespace '{host}' (is the emulation up? see zipper-emulate status)")
    cmd = ["ip", "netns", "exec", host, "unshare", "--uts"]
    if os.environ.get("ZIPPER_RSH_NO_PIN", "0") != "1":
        cpu = emulation_topology.cpu_for_host(host)
        if cpu is not None:
            cmd += ["taskset", "-c", str(cpu)]
    cmd += ["sh", "-c", f"hostname {host} && {' '.join(args)}"]
    if os.environ.get("ZIPPER_RSH_DEBUG", "0") == "1":
        print(f"{PROG}: {quote_cmd(cmd)}", file=sys.stderr)
    cg = emulation_cgroups.node_cgroup(host)
    if cg:
        emulation_cgroups.join_cgroup(cg)
    try:
        os.setsid()  # an autogroup of its own, even without cgroups
    except OSError:
        pass  # already a session leader
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:
        _fail(f"cannot run {cmd[0]}: {e.strerror}")
    return 255
