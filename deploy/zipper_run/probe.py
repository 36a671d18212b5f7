"""Is the listener at HOST:PORT a zipperd?  (zipper protocol probe)

Sends what a client sends first, a HELLO (proto/frame.h: 64-byte
little-endian header; proto/site_hello.h: the site table of protocol 2) for
a harmless 1+1 layout, and checks that the reply starts with a valid zipper
frame header (magic "ZIPP", a known frame type, protocol version 1 or 2: a
zipperd of another release still holds the port, and answers in its own
version); then it says BYE, which zipperd logs at debug
level only (forwarder/relay.cpp), so probes leave no warnings. zipperd answers a HELLO with a CHALLENGE
(or an ERROR frame); anything else (an HTTP server's "400 Bad Request", a
silent listener, a reset) is not a zipperd.

Runs as a module function or as a script inside a namespace:
    ip netns exec NS python3 probe.py HOST PORT VRANK
exit status 0: a zipperd; 1: nothing listens; 2: something else listens
(its first bytes on stdout as a Python repr).
"""

import socket
import struct
import sys
import time

MAGIC = 0x5A495050
VERSION = 2
OLDEST_VERSION = 1
HEADER = struct.Struct("<IHBBQIIiIQIIQQ")  # proto/frame.cpp encode_header
assert HEADER.size == 64
HELLO, BYE, MAX_TYPE = 1, 10, 12
PROBE_JOB_ID = 0  # job 0: the probe is never admitted (no AUTH follows)

ZIPPERD, NOTHING, OTHER = 0, 1, 2


def hello_frame(vrank):
    """HELLO for rank `vrank` of a 1+1 job (vrank 0 is site 0's, 1 is site 1's):
    vrank, site, sites, world, auth_len, then the ranks of each site."""
    payload = struct.pack("<IIIIIII", vrank, vrank, 2, 2, 0, 1, 1)
    hdr = HEADER.pack(MAGIC, VERSION, HELLO, 0, PROBE_JOB_ID, vrank, 0, 0, 0, 0,
                      len(payload), 0, len(payload), 0)
    return hdr + payload


def bye_frame():
    """BYE after the CHALLENGE: the probe leaves in order."""
    return HEADER.pack(MAGIC, VERSION, BYE, 0, PROBE_JOB_ID, 0, 0, 0, 0, 0, 0, 0, 0, 0)


def is_zipper_header(data):
    """True if `data` starts with a header zipperd could have sent."""
    if len(data) < HEADER.size:
        return False
    f = HEADER.unpack_from(data)
    return f[0] == MAGIC and OLDEST_VERSION <= f[1] <= VERSION and 1 <= f[2] <= MAX_TYPE


def probe(host, port, vrank=0, timeout=2.0):
    """Returns (verdict, detail): ZIPPERD, NOTHING (connection refused/unreachable)
    or OTHER (something that does not speak the zipper protocol).
    Whole probe bounded by `timeout` seconds."""
    deadline = time.monotonic() + timeout
    try:
        s = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        return NOTHING, str(e)
    with s:
        data = b""
        try:
            s.sendall(hello_frame(vrank))
            while len(data) < HEADER.size:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                s.settimeout(left)
                chunk = s.recv(HEADER.size - len(data))
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        if is_zipper_header(data):
            try:  # BYE: zipperd logs the probe at debug level, not as a warning
                s.sendall(bye_frame())
                s.shutdown(socket.SHUT_WR)
                s.settimeout(max(0.05, deadline - time.monotonic()))
                while s.recv(4096):  # until zipperd closes: no reset on our side
                    pass
            except OSError:
                pass
            return ZIPPERD, ""
        if not data:
            return OTHER, "no answer to a zipper HELLO"
        return OTHER, f"answered {data[:32]!r}, not a zipper frame"


def main(argv):
    verdict, detail = probe(argv[1], int(argv[2]), int(argv[3]) if len(argv) > 3 else 0)
    if detail:
        print(detail)
    return verdict


if __name__ == "__main__":
    sys.exit(main(sys.argv))
