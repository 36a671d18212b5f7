#!/usr/bin/env python3
"""`zipper-run --zipper-host` leaves no predictable path in a
world-writable directory and signals only the zipperd it started.

A fake ssh runs the "remote" commands on this host. While the job runs:
- zipperd's pid file must lie in a private directory (owner root, mode 0700,
  not directly in /tmp); an unprivileged user ('nobody') who reads its path
  from ps cannot plant a symlink there nor write a pid into it;
- a planted pid file (root overwrites it with the pid of an innocent process
  as soon as zipperd wrote it, as a pid file in a shared directory could be)
  makes zipper-run's stop
  signal nothing but the zipperd it started: the innocent process survives,
  the zipperd is gone, the private directory is removed, and a file a planted
  symlink would have overwritten is unchanged.

usage: launcher_pidfile.py BIN_DIR
Exit 77 when not root or setpriv is missing.
"""

import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_pidfile(marker):
    """(pid, pid-file path) of the zipperd whose command line carries `marker`."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv]
        if marker in args and "--pid-file" in args and os.path.basename(args[0]) == "zipperd":
            return int(d), args[args.index("--pid-file") + 1]
    return None, None


def as_nobody(cmd):
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def main():
    bin_dir = sys.argv[1]
    if os.geteuid() != 0:
        print("SKIP: needs root (it plays root's zipper-run and an unprivileged attacker)")
        return 77
    if not subprocess.run(["sh", "-c", "command -v setpriv"], stdout=subprocess.DEVNULL).returncode == 0:
        print("SKIP: setpriv (util-linux) not installed")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        ssh = os.path.join(tmp, "fake-ssh")
        with open(ssh, "w") as f:  # ssh [-n] HOST COMMAND: run COMMAND here
            f.write('#!/bin/sh\n[ "$1" = -n ] && shift\nshift\nexec sh -c "$*"\n')
        os.chmod(ssh, 0o755)
        hosts = os.path.join(tmp, "hosts")
        with open(hosts, "w") as f:
            f.write("localhost slots=8\n")
        victim_file = os.path.join(tmp, "precious")
        with open(victim_file, "w") as f:
            f.write("precious\n")
        innocent = subprocess.Popen(["sleep", "300"])
        pa, pb = free_port(), free_port()
        marker = f"A=127.0.0.1:{pa}"
        cmd = [os.path.join(bin_dir, "zipper-run"), "-x", "1", "-y", "1", "--hostfile-a", hosts,
               "--hostfile-b", hosts, "--forwarder-a", f"127.0.0.1:{pa}", "--forwarder-b",
               f"127.0.0.1:{pb}", "--zipper-host", "bridge", "--ssh", ssh,
               "--zipperd", os.path.join(bin_dir, "zipperd"), "--timeout", "120",
               "--mpirun-args-a", f"--mca orte_tmpdir_base {tmp}/a",
               "--mpirun-args-b", f"--mca orte_tmpdir_base {tmp}/b", "--",
               os.path.join(bin_dir, "mmpi_itest"), "ring"]
        os.mkdir(f"{tmp}/a")
        os.mkdir(f"{tmp}/b")
        print("+", " ".join(cmd), flush=True)
        run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines, up = [], threading.Event()

        def read():
            for line in run.stdout:
                lines.append(line)
                if "zipperd running" in line:
                    up.set()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            zpid = path = None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (path and os.path.exists(path)):
                zpid, path = find_pidfile(marker)
                time.sleep(0.05)
            if not path:
                fail("zipperd with a pid file never showed up")
            d = os.path.dirname(path)
            st = os.lstat(d)
            print(f"pid file {path}")
            if d in ("/tmp", "/var/tmp", "/dev/shm") or not stat.S_ISDIR(st.st_mode):
                fail(f"the pid file lies directly in {d}")
            if st.st_uid != 0 or stat.S_IMODE(st.st_mode) != 0o700:
                fail(f"{d} is not root's private directory (mode {oct(st.st_mode)})")
            r = as_nobody(["ln", "-s", victim_file, os.path.join(d, "planted")])
            if r.returncode == 0:
                fail("an unprivileged user planted a symlink beside the pid file")
            r2 = as_nobody(["sh", "-c", f"echo {innocent.pid} > {path}"])
            if r2.returncode == 0:
                fail("an unprivileged user wrote the pid file")
            print(f"nobody: symlink refused ({r.stdout.strip()}), pid file write refused")
            # What a pid file in a shared directory allowed: another pid in it,
            # as soon as zipperd wrote it.
            with open(path, "w") as f:
                f.write(f"{innocent.pid}\n")
            print(f"planted pid {innocent.pid} in {path}")
            run.wait(timeout=200)
            reader.join(10)
            out = "".join(lines)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        print(out)
        if not up.is_set() or run.returncode != 0 or "PASS ring" not in out:
            fail(f"the job failed (status {run.returncode})")
        if innocent.poll() is not None:
            fail("zipper-run's stop killed the process named by the planted pid file")
        innocent.kill()
        innocent.wait()
        time.sleep(0.5)
        if os.path.exists(f"/proc/{zpid}") and open(f"/proc/{zpid}/stat").read().split()[2] != "Z":
            fail(f"the zipperd zipper-run started (pid {zpid}) still runs")
        if os.path.exists(d):
            fail(f"the private directory {d} was left behind")
        if open(victim_file).read() != "precious\n":
            fail("the file behind a planted symlink was overwritten")
        print("innocent process alive, zipperd stopped, private directory removed")
    print("PASS security_launcher_pidfile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
