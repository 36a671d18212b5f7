#!/usr/bin/env python3
"""A peer of the other wire protocol version is refused with one line naming
both versions (proto/site_hello.h version_mismatch), in both directions:

1. an old rank (protocol 1: HELLO of vrank, np_low, np_high, auth_len) at
   this release's zipperd: it gets an ERROR in its own protocol version whose
   text names both, the connection ends, and zipperd's log has the line;
2. this release's rank (a real libmmpi process, started without mpirun as
   an MPI singleton) at an old zipperd, which answers a HELLO it cannot
   decode with an ERROR of protocol 1 and closes: the rank fails at
   MMPI_Init with the line naming both versions.

usage: old_peer_itest.py BIN_DIR     (loopback only, a few seconds)
"""

import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HEADER = struct.Struct("<IHBBQIIiIQIIQQ")  # proto/frame.cpp encode_header
MAGIC, HELLO, ERROR = 0x5A495050, 1, 9
BAD_HELLO, MALFORMED = 3, 1
LINE_TO_OLD_RANK = re.compile(
    r"^zipperd at 127\.0\.0\.1:\d+ speaks zipper protocol version 2, this libmmpi speaks 1: "
    r"run libmmpi and zipperd of the same release$")


def fail(why):
    print(f"FAIL old_peer: {why}")
    sys.exit(1)


def frame(version, ftype, payload=b"", flags=0, job=0, src=0):
    return HEADER.pack(MAGIC, version, ftype, flags, job, src, 0, 0, 0, 0, len(payload), 0,
                       len(payload) if ftype != ERROR else 0, 0) + payload


def read_exactly(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            return out
        out += chunk
    return out


def old_rank_at_new_zipperd(bindir, work):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import loopback_ports  # noqa: E402 (beside this file)
    port = loopback_ports.pick(2, *loopback_ports.candidate_range())
    if port is None:
        fail("no two consecutive free loopback ports")
    log_path = os.path.join(work, "zipperd.log")
    pid_file = os.path.join(work, "zipperd.pid")
    with open(log_path, "wb") as log:
        zd = subprocess.Popen([os.path.join(bindir, "zipperd"), "--listen", f"A=127.0.0.1:{port}",
                               "--listen", f"B=127.0.0.1:{port + 1}", "--pid-file", pid_file,
                               "--log-level", "info"], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not (os.path.exists(pid_file) and os.path.getsize(pid_file) > 0):
            if zd.poll() is not None or time.monotonic() > deadline:
                fail(f"zipperd did not start: {open(log_path, errors='replace').read()[-2000:]}")
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(frame(1, HELLO, struct.pack("<IIII", 0, 1, 1, 0), job=42))
            hdr = read_exactly(s, HEADER.size)
            if len(hdr) != HEADER.size:
                fail(f"no answer to an old HELLO ({len(hdr)} bytes)")
            f = HEADER.unpack(hdr)
            magic, version, ftype, flags, payload_len = f[0], f[1], f[2], f[3], f[10]
            if (magic, version, ftype, flags) != (MAGIC, 1, ERROR, BAD_HELLO):
                fail(f"answer: magic {magic:#x} version {version} type {ftype} flags {flags}; "
                     "expected an ERROR (bad hello) in protocol version 1")
            text = read_exactly(s, payload_len).decode()
            if not LINE_TO_OLD_RANK.match(text):
                fail(f"the old rank reads {text!r}")
            if s.recv(1) != b"":
                fail("zipperd kept the connection of an old rank")
        time.sleep(0.3)  # the log line is written before the close; let it reach the file
        log = open(log_path, errors="replace").read()
        want = re.compile(r"refused the rank at tcp:127\.0\.0\.1:\d+ speaks zipper protocol version 1, "
                          r"this zipperd speaks 2: run libmmpi and zipperd of the same release")
        if not want.search(log):
            fail(f"no line naming both versions in zipperd's log:\n{log[-2000:]}")
        if "protocol error" in log.lower():
            fail("the old rank counted as a protocol error")
        print(f"old rank at zipperd: {text}")
    finally:
        zd.terminate()
        zd.wait(timeout=10)


def new_rank_at_old_zipperd(bindir):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    lsock.settimeout(30)
    port = lsock.getsockname()[1]
    seen = {}

    def old_zipperd():
        # What the last release's zipperd does with a frame header of
        # another version: an ERROR (malformed) in its own version, then close.
        try:
            c, _ = lsock.accept()
        except OSError:
            return
        with c:
            c.settimeout(20)
            seen["hello"] = read_exactly(c, HEADER.size)
            text = b"malformed frame from tcp:127.0.0.1:1: unsupported protocol version"
            c.sendall(frame(1, ERROR, text, flags=MALFORMED))
            c.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=old_zipperd, daemon=True)
    t.start()
    env = dict(os.environ, MMPI_FORWARDER=f"127.0.0.1:{port}", MMPI_JOB_SECRET="ab" * 32,
               MMPI_GROUP="low", MMPI_NP_LOW="1", MMPI_NP_HIGH="1", MMPI_FORWARDER_KEY_CHECK="accept",
               MMPI_CONNECT_TIMEOUT="20")
    for v in ("MMPI_SITES", "MMPI_SITE", "MMPI_JOB_SECRET_FILE", "MMPI_JOB_SECRET_FD"):
        env.pop(v, None)
    r = subprocess.run([os.path.join(bindir, "mmpi_itest"), "ring"], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=90)
    t.join(timeout=5)
    lsock.close()
    hello = seen.get("hello", b"")
    if len(hello) != HEADER.size or HEADER.unpack(hello)[1] != 2:
        fail(f"the rank's HELLO is not of protocol version 2: {hello[:8]!r}")
    line = (f"zipperd at 127.0.0.1:{port} speaks zipper protocol version 1, this libmmpi speaks 2: "
            "run libmmpi and zipperd of the same release")
    if r.returncode == 0 or line not in r.stdout:
        fail(f"rank exit status {r.returncode}, output:\n{r.stdout[-3000:]}\n(expected the line: {line})")
    print(f"rank at an old zipperd: {line}")


def main():
    bindir = sys.argv[1]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="old-peer.") as work:
        old_rank_at_new_zipperd(bindir, work)
    new_rank_at_old_zipperd(bindir)
    print(f"PASS old_peer ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
