"""Forwarder addresses: [tcp:|verbs:]HOST:PORT, and comma-separated lists of them.

Index i of a list is bridge node i (docs/launch-contract.md, MMPI_FORWARDER).
"""

import re
from dataclasses import dataclass

_HOSTPORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]+)")


@dataclass(frozen=True)
class Address:
    """One forwarder address as written by the user (`text`) and its parts."""

    text: str
    scheme: str  # "tcp" or "verbs"
    host: str  # without IPv6 brackets
    port: int  # for verbs: the value after the last colon (a port or GID index)

    @property
    def listen(self):
        """The zipperd --listen value (no tcp: prefix, verbs: kept)."""
        return self.text[4:] if self.text.startswith("tcp:") else self.text


def parse_addr(text):
    """Parse [tcp:|verbs:]HOST:PORT; returns an Address or None if malformed."""
    a = text[4:] if text.startswith("tcp:") else text
    scheme = "tcp"
    if a.startswith("verbs:"):
        a, scheme = a[6:], "verbs"
    m = _HOSTPORT.fullmatch(a)
    if not m:
        return None
    port = int(m.group(2))
    if not 1 <= port <= 65535:
        return None
    return Address(text, scheme, m.group(1).strip("[]"), port)


def parse_list(text):
    """Parse a comma-separated list of addresses; None if any is malformed or empty."""
    items = text.split(",")
    out = [parse_addr(t) for t in items]
    if not items or any(x is None for x in out):
        return None
    return out


def join(addrs):
    """The MMPI_FORWARDER value for a list of addresses."""
    return ",".join(a.text for a in addrs)
