"""Host keys of zipperd instances this run did not start (--no-zipperd, or
real clusters without --zipper-host): using a site zipperd is explicit and
needs its key (docs/security.md). Ranks refuse an unpinned
forwarder by default; zipper-run checks first so the run fails at once with a
clear line instead of in every rank.
"""

import os
import re

from .errors import Fatal, say

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def _env_value(o, name):
    """`name` as the ranks will see it: --env NAME=VALUE wins over the caller's environment."""
    for e in reversed(o.env):
        k, sep, v = e.partition("=")
        if k == name:
            return v if sep else os.environ.get(name, "")
    return os.environ.get(name, "")


def accept_requested(o):
    """True when the user asked for unauthenticated forwarders (printed once)."""
    return _env_value(o, "MMPI_FORWARDER_KEY_CHECK") == "accept"


def _strip_scheme(text):
    for scheme in ("tcp:", "verbs:"):
        if text.startswith(scheme):
            return text[len(scheme):]
    return text


def _known_addresses(path):
    """HOST:PORT entries of a known_forwarders file ('' when it cannot be read)."""
    try:
        with open(path) as f:
            text = f.read(1 << 20)
    except OSError:
        return None
    out = set()
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2:
            out.update(_strip_scheme(h) for h in fields[0].split(",") if h)
    return out


def site_files(self_dir):
    """The known_forwarders files libmmpi reads when MMPI_KNOWN_FORWARDERS is unset."""
    return [os.path.normpath(os.path.join(self_dir, "..", "etc", "zipper", "known_forwarders")),
            "/etc/zipper/known_forwarders"]


def keys_for(o, bridges, self_dir):
    """MMPI_FORWARDER_KEYS for bridge nodes zipper-run did not start: the
    --forwarder-keys list (one per bridge node), or None when the ranks find
    the keys themselves (MMPI_FORWARDER_KEYS, a known_forwarders file naming
    every address) or accept was asked for. Fatal otherwise."""
    if o.forwarder_keys:
        keys = [k.strip().lower() for k in o.forwarder_keys.split(",")]
        if len(keys) != len(bridges) or not all(_HEX64.fullmatch(k) for k in keys):
            raise Fatal(f"--forwarder-keys needs {len(bridges)} public key(s) of 64 hex digits, "
                        "one per bridge node in --forwarder-a order (`zipperctl host-key` on each)")
        return keys
    if _env_value(o, "MMPI_FORWARDER_KEYS") or accept_requested(o):
        return None
    wanted = {_strip_scheme(a.text) for br in bridges for a in br.fwd}
    known = _env_value(o, "MMPI_KNOWN_FORWARDERS")
    for path in [known] if known else site_files(self_dir):
        have = _known_addresses(path)
        if have is not None and wanted <= have:
            return None
    missing = ", ".join(sorted(wanted))
    raise Fatal(f"no host key pinned for the site zipperd at {missing}: give its key with "
                "--forwarder-keys KEY[,KEY...] (`zipperctl host-key` on the bridge node), "
                "MMPI_FORWARDER_KEYS or a known_forwarders entry (docs/operations.md); "
                "MMPI_FORWARDER_KEY_CHECK=accept uses it unauthenticated")


def warn_if_accept(o):
    if accept_requested(o):
        say("warning: MMPI_FORWARDER_KEY_CHECK=accept: ranks use forwarders whose host key is "
            "not pinned, and every rank logs it (docs/security.md)")
