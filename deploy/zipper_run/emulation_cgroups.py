"""A cgroup per emulated node with an equal CPU share: zipper-emulate makes
and removes them, zipper-run and zipper-netns-rsh put each node's processes
into its node's (docs/launch-contract.md)."""

import os
import re

from .emulation_shell import info

# Where zipper-emulate makes the node cgroups: cgroup v2 with the cpu
# controller, else the cgroup v1 cpu hierarchy (equal cpu.shares per node).
CGROUP_V2 = "/sys/fs/cgroup"
CGROUP_V1_CPU = "/sys/fs/cgroup/cpu"
CGROUP_ROOTS = ("/sys/fs/cgroup/zipper-emulate", "/sys/fs/cgroup/cpu/zipper-emulate")


def node_cgroup(host):
    """cgroup.procs of the node's cgroup if zipper-emulate made one, else None."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", host):
        return None
    # Inside `ip netns exec` (mpirun's launch agent runs there) /sys is a fresh
    # sysfs without the cgroup mounts: reach them through the root of a process
    # outside, zipper-run's (ZIPPER_RSH_ROOT=/proc/PID/root, set by zipper-run).
    outside = os.environ.get("ZIPPER_RSH_ROOT", "")
    for prefix in ("", outside) if re.fullmatch(r"/proc/[0-9]+/root", outside) else ("",):
        for root in CGROUP_ROOTS:
            procs = prefix + os.path.join(root, host, "cgroup.procs")
            if os.path.isfile(procs):
                return procs
    return None


def join_cgroup(procs):
    """Move the calling process into the cgroup whose cgroup.procs is `procs`.

    Async-signal-safe enough for a preexec_fn: one open and one write of "0"
    (the writer itself). Returns True on success.
    """
    try:
        fd = os.open(procs, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, b"0")
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def make_cgroups(nodes):
    """One cgroup per emulated node with the default (equal) CPU weight, so that
    every node gets an equal share whatever its session or autogroup; their
    parent weighs as many default tasks as there are nodes.
    Returns the base directory, or "" when the machine offers no cpu controller."""
    why = ""
    base = ""
    try:
        if os.path.exists(os.path.join(CGROUP_V2, "cgroup.controllers")):
            if "cpu" not in open(os.path.join(CGROUP_V2, "cgroup.controllers")).read().split():
                why = "cgroup v2 has no cpu controller here"
            else:
                base = os.path.join(CGROUP_V2, "zipper-emulate")
                _write(os.path.join(CGROUP_V2, "cgroup.subtree_control"), "+cpu")
                os.makedirs(base, exist_ok=True)
                _write(os.path.join(base, "cgroup.subtree_control"), "+cpu")
        elif os.access(os.path.join(CGROUP_V1_CPU, "cgroup.procs"), os.W_OK):
            base = os.path.join(CGROUP_V1_CPU, "zipper-emulate")
            os.makedirs(base, exist_ok=True)
        else:
            why = "no cgroup v2 cpu controller and no writable cgroup v1 cpu hierarchy"
        if not why:
            for ns in nodes:
                os.makedirs(os.path.join(base, ns), exist_ok=True)
            # The emulation as a whole weighs what its nodes would as separate
            # tasks beside the host's other work (one default weight each).
            if base.startswith(CGROUP_V1_CPU):
                _write(os.path.join(base, "cpu.shares"), str(1024 * len(nodes)))
            else:
                _write(os.path.join(base, "cpu.weight"), str(min(10000, 100 * len(nodes))))
    except OSError as e:
        why = f"{e.filename}: {e.strerror}"
    if why:
        info(f"no per-node cgroups ({why}); zipper-run and zipper-netns-rsh fall back to a "
             "session per mpirun and per node")
        remove_cgroups()
        return ""
    return base


def remove_cgroups():
    """Best effort: a cgroup that still holds a process stays."""
    for base in (os.path.join(CGROUP_V2, "zipper-emulate"), os.path.join(CGROUP_V1_CPU, "zipper-emulate")):
        if not os.path.isdir(base):
            continue
        for d in os.listdir(base):
            if os.path.exists(os.path.join(base, d, "cgroup.procs")):
                try:
                    os.rmdir(os.path.join(base, d))
                except OSError:
                    pass
        try:
            os.rmdir(base)
        except OSError:
            pass
