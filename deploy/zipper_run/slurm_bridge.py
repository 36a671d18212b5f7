"""Per-job zipperd on a bridge node of a heterogeneous job's component 2.

    python3 slurm_bridge.py ZIPPERD NODE,A_LISTEN,B_LISTEN [...] -- [ZIPPERD ARGS...]

`zipper-run --slurm` starts this with one task per node of component 2
(`srun --het-group=2 --ntasks-per-node=1 --input=all`). It finds its own node
($SLURMD_NODENAME, else the host name) in the NODE,A_LISTEN,B_LISTEN list
(from the site configuration, docs/slurm.md). Standard input carries one
line per bridge node, "NODE SECRET_KEY_HEX": zipper-run made each node's host
key for this job and already gave the public halves to the ranks, so they
start at once and connect when zipperd listens. The node's key goes into a
private directory (mkdtemp, 0700; the file 0600, O_EXCL); zipperd is started
listening at the node's addresses with it, and once its pid file is written
one line goes to stdout:

    READY NODE
    FAILED NODE REASON

zipperd's own output goes to stderr. SIGTERM/SIGINT/SIGHUP are passed to
zipperd; when it ends, the private directory is removed and its status is
this program's.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

WAIT_S = 15


def pick(entries, node):
    """(a_listen, b_listen) of `node` among "NODE,A,B" entries, or None."""
    for e in entries:
        parts = e.split(",")
        if len(parts) == 3 and parts[0] == node:
            return parts[1], parts[2]
    return None


def main(argv):
    if "--" not in argv or len(argv) < 3:
        print("usage: slurm_bridge.py ZIPPERD NODE,A,B [...] -- [ZIPPERD ARGS]", file=sys.stderr)
        return 2
    sep = argv.index("--")
    zipperd, entries, extra = argv[0], argv[1:sep], argv[sep + 1:]
    node = os.environ.get("SLURMD_NODENAME") or os.uname().nodename.split(".")[0]
    addrs = pick(entries, node)
    if addrs is None:
        print(f"FAILED {node} no addresses for this node in the site configuration", flush=True)
        return 1
    keys = {}
    for line in sys.stdin.read(1 << 20).splitlines():
        f = line.split()
        if len(f) == 2 and re.fullmatch(r"[0-9a-f]{64}", f[1]):
            keys[f[0]] = f[1]
    if node not in keys:
        print(f"FAILED {node} no host key for this node on standard input", flush=True)
        return 1
    work = tempfile.mkdtemp(prefix="zipperd-job.")
    key = os.path.join(work, "host_key")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(keys[node] + "\n")
    proc = None

    def forward(signum, _frame):
        if proc and proc.poll() is None:
            proc.send_signal(signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)
    try:
        pid = os.path.join(work, "zipperd.pid")
        proc = subprocess.Popen([zipperd, "--listen", f"A={addrs[0]}", "--listen", f"B={addrs[1]}",
                                 "--pid-file", pid, "--host-key", key] + extra,
                                stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno())
        deadline = time.monotonic() + WAIT_S
        while not (os.path.isfile(pid) and os.path.getsize(pid) > 0):
            if proc.poll() is not None:
                print(f"FAILED {node} zipperd exited with status {proc.returncode}", flush=True)
                return 1
            if time.monotonic() > deadline:
                print(f"FAILED {node} zipperd did not start within {WAIT_S} s", flush=True)
                proc.terminate()
                proc.wait()
                return 1
            time.sleep(0.02)
        print(f"READY {node}", flush=True)
        while True:
            try:
                rc = proc.wait()
                break
            except InterruptedError:
                continue
        return 128 - rc if rc < 0 else rc
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
