"""Who holds a TCP port: the listening socket in /proc/net/tcp{,6} and the
process with that socket among its file descriptors (/proc/PID/fd), as
`ss -ltnp` finds it. Readable for our own processes always, for every process
as root; otherwise the answer is "" (the error message then names the port
only).

Runs as a module function or as a script inside a namespace (the socket
table is per network namespace, the process table is not):
    ip netns exec NS python3 port_holder.py PORT
prints the holder's description (or nothing).
"""

import os
import pwd
import sys

_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's "st" column


def listening_inodes(port):
    """Socket inodes listening on `port` (any address) in this network namespace."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    fields = line.split()
                    if len(fields) < 10 or fields[3] != _LISTEN:
                        continue
                    if int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    return inodes


def _describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return f"pid {pid}"
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    return f"pid {pid} ({cmd[:80] or '?'}) of user {user}"


def holder(port):
    """'pid N (COMMAND) of user U' for the process listening on `port`, else ""."""
    want = {f"socket:[{i}]" for i in listening_inodes(port)}
    if not want:
        return ""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in want:
                    return _describe(pid)
            except OSError:
                continue
    return ""


if __name__ == "__main__":
    print(holder(int(sys.argv[1])))
