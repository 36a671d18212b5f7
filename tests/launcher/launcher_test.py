#!/usr/bin/env python3
"""zipper-run's own behaviour (tests/launcher): one CTest test per subcommand.

    launcher_test.py BIN_DIR CHECK [ARG]

version VERSION   --version prints the CMake project version
foreign           a non-zipper listener (an HTTP server) on the port: zipper-run
                  fails within 5 s with a message naming the port
tmpdir            the temporary directory (ompi-a/ompi-b included) is gone after
                  a passing run, a failing one, a --timeout and a SIGTERM
quiet             reusing a running zipperd: its probes leave no warning in
                  zipperd's log, and the job passes through it
transparent       --transparent sets LD_PRELOAD and MMPI_TRANSPARENT=1 on every
                  rank, and fails clearly when the library is absent
zippers-local     --zippers 2 on loopback: two zipperd, MMPI_FORWARDER is the
                  list on every rank, and every byte of the mmpi_itest suites
                  checked through each bridge node
zippers-emulated  the same on the emulation (2+2 nodes, 2 bridge nodes shaped
                  with --rate-zipper), and each rank in its node's cgroup (or,
                  without cgroups, each mpirun leading a session of its own)

libmmpi reads one forwarder address today; until it reads the list, the byte
checks pin each run to one element of the list (bridge node 1, then 2).
Exit 77: skipped (with the reason), 0: pass, 1: fail.
"""

import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

BIN = ""


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def skip(msg):
    print(f"SKIP: {msg}")
    sys.exit(77)


def free_ports(n):
    """n consecutive free TCP ports on loopback."""
    for _ in range(200):
        p = random.randint(20000, 40000)
        socks = []
        try:
            for i in range(n):
                s = socket.socket()
                s.bind(("127.0.0.1", p + i))
                socks.append(s)
            return p
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    fail("no free ports")


def zrun(args, env=None, timeout=300, **kw):
    cmd = [os.path.join(BIN, "zipper-run")] + args
    print("+", " ".join(cmd), flush=True)
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, **kw)


def check_version(version):
    r = zrun(["--version"])
    print(r.stdout, end="")
    if r.returncode != 0 or r.stdout.strip() != f"zipper-run (zipper) {version}":
        fail(f"--version printed {r.stdout.strip()!r}, status {r.returncode}")


def check_foreign():
    port = free_ports(1)
    with tempfile.TemporaryDirectory() as tmp:
        http = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                                cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            t0 = time.monotonic()
            r = zrun(["--local", "--port", str(port), "-x", "1", "-y", "1", "--", "true"],
                     env={"TMPDIR": tmp}, timeout=60)
            dt = time.monotonic() - t0
            print(r.stdout, end="")
            if r.returncode == 0:
                fail("zipper-run accepted an HTTP server as its forwarder")
            # Never "using it"; one line naming the port and its holder.
            if f"port {port} is already taken" not in r.stdout or f"pid {http.pid}" not in r.stdout:
                fail(f"the error does not name port {port} and the process holding it")
            if dt > 5:
                fail(f"took {dt:.1f} s (limit 5 s)")
            if os.listdir(tmp):
                fail(f"left behind in TMPDIR: {os.listdir(tmp)}")
            print(f"refused in {dt:.1f} s")
        finally:
            http.terminate()
            http.wait()


def check_tmpdir():
    port = str(free_ports(1))
    base = ["--local", "--port", port, "-x", "1", "-y", "1"]
    cases = [("pass", base + ["--", "true"], 0),
             ("fail", base + ["--grace", "1", "--", "sh", "-c", "exit 3"], 3),
             ("timeout", base + ["--timeout", "2", "--", "sleep", "60"], 124)]
    for name, args, want in cases:
        with tempfile.TemporaryDirectory() as tmp:
            r = zrun(args, env={"TMPDIR": tmp})
            if r.returncode != want:
                print(r.stdout)
                fail(f"{name}: status {r.returncode}, expected {want}")
            if os.listdir(tmp):
                fail(f"{name}: left behind {os.listdir(tmp)}")
            print(f"{name}: status {r.returncode}, TMPDIR empty")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        p = subprocess.Popen([os.path.join(BIN, "zipper-run")] + base + ["--", "sleep", "60"], env=env)
        deadline = time.monotonic() + 60
        while not any(os.path.isdir(os.path.join(d, "ompi-b")) for d in
                      (os.path.join(tmp, x) for x in os.listdir(tmp))):
            if time.monotonic() > deadline or p.poll() is not None:
                fail("the run never got to its ranks")
            time.sleep(0.1)
        time.sleep(2)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
        if rc != 143:
            fail(f"SIGTERM: status {rc}, expected 143")
        if os.listdir(tmp):
            fail(f"SIGTERM: left behind {os.listdir(tmp)}")
        print("SIGTERM: status 143, TMPDIR empty")


def check_quiet():
    port = free_ports(1)
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "zipperd.log")
        pid = os.path.join(tmp, "zipperd.pid")
        with open(log, "w") as f:
            # As a site's zipperd: a host key file (no warning about a key
            # made for one run), which the ranks pin.
            zd = subprocess.Popen([os.path.join(BIN, "zipperd"), "--listen", f"A=127.0.0.1:{port}",
                                   "--pid-file", pid, "--host-key", os.path.join(tmp, "host_key")],
                                  stdout=f, stderr=f)
        try:
            for _ in range(100):
                if os.path.exists(pid):
                    break
                time.sleep(0.1)
            with open(os.path.join(tmp, "host_key.pub")) as kf:
                pinned = kf.read().split()[0]
            # A zipperd this run did not start: explicit, with its key.
            addr = f"127.0.0.1:{port}"
            r = zrun(["--local", "--no-zipperd", "--forwarder-a", addr, "--forwarder-b", addr,
                      "--forwarder-keys", pinned, "-x", "1", "-y", "1", "--timeout", "120", "--",
                      os.path.join(BIN, "mmpi_itest"), "ring"])
            print(r.stdout, end="")
            if "not authenticated" in r.stdout:
                fail("a rank did not authenticate the pinned zipperd")
            if r.returncode != 0 or "PASS ring" not in r.stdout:
                fail(f"the job through the running zipperd failed (status {r.returncode})")
            if "starting zipperd" in r.stdout:
                fail("zipper-run started a zipperd of its own")
        finally:
            zd.terminate()
            zd.wait()
        text = open(log).read()
        bad = [l for l in text.splitlines() if "[warning]" in l or "[error]" in l
               or re.search(r"[1-9][0-9]* protocol errors", l)]
        if bad:
            fail("zipperd logged:\n" + "\n".join(bad))
        if "all 2 ranks connected" not in text:
            fail("the job never reached zipperd")
        print("no warnings in zipperd's log")


def check_transparent():
    lib = [p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                       "/lib64/libm.so.6") if os.path.exists(p)]
    if not lib:
        skip("no libm.so.6 to stand in for the transparent layer")
    port = str(free_ports(1))
    show = ["sh", "-c", 'echo "rank $MMPI_GROUP LD_PRELOAD=$LD_PRELOAD MMPI_TRANSPARENT=$MMPI_TRANSPARENT"']
    r = zrun(["--local", "--port", port, "--standalone", "-x", "1", "-y", "1", "--transparent", "--"] + show,
             env={"MMPI_TRANSPARENT_LIB": lib[0]})
    print(r.stdout, end="")
    want = f"LD_PRELOAD={lib[0]} MMPI_TRANSPARENT=1"
    if r.returncode != 0 or r.stdout.count(want) != 2:
        fail(f"expected two ranks with '{want}'")
    r = zrun(["--local", "--port", port, "-x", "1", "-y", "1", "--transparent", "--", "true"],
             env={"MMPI_TRANSPARENT_LIB": "/nonexistent/libmmpi_transparent.so"})
    print(r.stdout, end="")
    if r.returncode != 1 or "MMPI_TRANSPARENT_LIB" not in r.stdout:
        fail("a missing transparent library was not a clear error")


def run_picked(args, pick, test, prog="mmpi_itest"):
    """Run mmpi_itest TEST with MMPI_FORWARDER (and the host keys zipper-run pins,
    MMPI_FORWARDER_KEYS) cut to element `pick` of the list, then with the whole
    list (the ranks stripe over every bridge node)."""
    wrap = ('export MMPI_FORWARDER=$(printf %s "$MMPI_FORWARDER" | cut -d, -f"$0"); '
            '[ -z "$MMPI_FORWARDER_KEYS" ] || '
            'export MMPI_FORWARDER_KEYS=$(printf %s "$MMPI_FORWARDER_KEYS" | cut -d, -f"$0"); '
            'exec "$@"')
    r = zrun(args + ["--", "sh", "-c", wrap, str(pick), os.path.join(BIN, prog), test])
    if r.returncode != 0 or f"PASS {test}" not in r.stdout:
        print(r.stdout)
        fail(f"{test} through bridge node {pick}: status {r.returncode}")
    print(f"PASS {test} through bridge node {pick}")


def check_list(args, want_a, want_b, nodes_out=None):
    show = ["sh", "-c", 'echo "RANK $(hostname) $MMPI_GROUP $MMPI_FORWARDER $(grep -E '
            '\'(^[0-9]+:cpu[,:]|^0::)\' /proc/self/cgroup | tr \'\\n\' \' \') SID=$(ps -o sid= -p $$) '
            'PID=$$"']
    r = zrun(args + ["--"] + show)
    print(r.stdout, end="")
    lines = [l.split() for l in r.stdout.splitlines() if l.startswith("RANK ")]
    if r.returncode != 0 or not lines:
        fail(f"status {r.returncode}")
    for f in lines:
        want = want_a if f[2] == "low" else want_b
        if f[3] != want:
            fail(f"rank on {f[1]} ({f[2]}) got MMPI_FORWARDER={f[3]}, expected {want}")
    if nodes_out is not None:
        nodes_out.extend(lines)
    print(f"MMPI_FORWARDER lists right on {len(lines)} ranks")


def check_zippers_local():
    port = free_ports(2)
    args = ["--local", "--zippers", "2", "--port", str(port), "-x", "2", "-y", "2", "--timeout", "200"]
    check_list(args, f"127.0.0.1:{port},127.0.0.1:{port + 1}", f"127.0.0.1:{port},127.0.0.1:{port + 1}")
    for pick in (1, 2):
        for t in ("mix", "pipeline"):
            run_picked(args, pick, t)


def check_zippers_emulated():
    emulate = os.path.join(BIN, "zipper-emulate")
    r = subprocess.run([emulate, "check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        skip(f"emulated clusters unavailable: {r.stdout.strip()}")
    if subprocess.call([emulate, "up", "--nodes-a", "2", "--nodes-b", "2", "--zippers", "2",
                        "--rate-zipper", "4gbit", "--force"]) != 0:
        fail("zipper-emulate up --zippers 2 failed")
    st = subprocess.run([emulate, "status"], stdout=subprocess.PIPE, text=True).stdout
    print(st)
    for ns in ("zipper1", "zipper2"):
        if ns not in st:
            fail(f"no namespace {ns}")
    if st.count("rate 4Gbit") < 8:
        fail("the bridge nodes' ports are not all shaped (zA, zB and their bridge ports, both nodes)")
    args = ["--emulated", "--zippers", "2", "--nodes-a", "2", "--nodes-b", "2", "-x", "2", "-y", "2",
            "--timeout", "200"]
    lines = []
    check_list(args, "10.201.0.254:7470,10.201.0.253:7470", "10.202.0.254:7470,10.202.0.253:7470", lines)
    cgroups = "node cgroups: /" in st
    for f in lines:
        host, rest = f[1], " ".join(f[4:])
        if cgroups:
            if f"/zipper-emulate/{host} " not in rest + " ":
                fail(f"rank on {host} is not in its node's cgroup: {rest}")
    if cgroups:
        print("every rank in its node's cgroup")
    for pick in (1, 2):
        for t in ("mix", "anysource"):
            run_picked(args, pick, t)


def main():
    global BIN
    BIN = sys.argv[1]
    check = sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    {"version": lambda: check_version(arg), "foreign": check_foreign, "tmpdir": check_tmpdir,
     "quiet": check_quiet, "transparent": check_transparent, "zippers-local": check_zippers_local,
     "zippers-emulated": check_zippers_emulated}[check]()
    print(f"PASS launcher_{check}")


if __name__ == "__main__":
    main()
