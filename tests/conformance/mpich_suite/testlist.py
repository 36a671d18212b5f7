"""Parse a directory of the MPICH test suite: its `testlist` (or `testlist.in`)
and the per-program build variables of its `Makefile.am`.

A testlist line is `program [np [key=value ...]]` (MPICH's runtests):
`arg=` (repeatable) and `env=NAME=VALUE` (repeatable) go to the program,
`timeLimit=` (seconds), `xfail=`, `resultTest=`, `mem=` (GB), `strict=`,
`mpiversion=` and `mpiexecarg=` are options; a line naming a subdirectory
includes that directory's testlist.
"""

import os
import re
from dataclasses import dataclass, field

DEFAULT_NP = 2  # runtests' np_default


@dataclass
class Entry:
    """One testlist line."""
    dir: str                      # suite-relative directory, e.g. "coll"
    program: str                  # program name, e.g. "allred"
    np: int                       # process count the testlist asks for
    args: list = field(default_factory=list)
    env: list = field(default_factory=list)  # "NAME=VALUE"
    opts: dict = field(default_factory=dict)  # timeLimit, xfail, resultTest, mem, ...
    line: int = 0

    @property
    def name(self):
        """`dir/program` followed by its arguments, as the tables show it."""
        s = f"{self.dir}/{self.program}"
        if self.args:
            s += " " + " ".join(self.args)
        if self.env:
            s += " [" + " ".join(self.env) + "]"
        return s


def _testlist_path(d):
    for name in ("testlist", "testlist.in"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    return None


def parse_testlist(suite, rel, warn=print):
    """Entries of directory `rel` under `suite` (recursing into listed subdirectories)."""
    path = _testlist_path(os.path.join(suite, rel))
    if path is None:
        raise FileNotFoundError(f"{rel}: no testlist or testlist.in in {os.path.join(suite, rel)}")
    entries = []
    with open(path) as f:
        for no, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line or line.startswith("!"):
                continue
            words = line.split()
            prog = words[0]
            if "@" in prog:  # configure substitutions (@mpix@, @iodir@, ...): not configured here
                continue
            if os.path.isdir(os.path.join(suite, rel, prog)):
                entries += parse_testlist(suite, f"{rel}/{prog}", warn)
                continue
            e = Entry(rel, prog, DEFAULT_NP, line=no)
            if len(words) > 1:
                if not words[1].isdigit():
                    warn(f"{path}:{no}: process count '{words[1]}' is not a number; line skipped")
                    continue
                e.np = int(words[1])
            for kv in words[2:]:
                key, _, value = kv.partition("=")
                if key == "arg":
                    e.args.append(value)
                elif key == "env":
                    e.env.append(value)
                else:
                    e.opts[key] = value
            if "/" in prog:
                sub, _, e.program = prog.rpartition("/")
                e.dir = f"{rel}/{sub}"
            entries.append(e)
    return entries


def parse_makefile_am(d):
    """{variable: value} of `d/Makefile.am` with continuation lines joined."""
    path = os.path.join(d, "Makefile.am")
    if not os.path.isfile(path):
        return {}
    text = open(path).read().replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_]+)\s*\+?=\s*(.*)$", line)
        if m:
            name, value = m.groups()
            out[name] = (out.get(name, "") + " " + value).strip() if "+=" in line else value.strip()
    return out


@dataclass
class Program:
    """How to build one test program: its sources and extra preprocessor flags."""
    dir: str
    name: str
    sources: list
    cppflags: list
    libs: list


def program_recipe(suite, rel, name, am):
    """The Program for `name` in `rel`, from Makefile.am `name_SOURCES` /
    `name_CPPFLAGS` / `name_LDADD` (default source `name.c`)."""
    key = re.sub(r"[^A-Za-z0-9_]", "_", name)
    sources = am.get(f"{key}_SOURCES", f"{name}.c").split()
    cpp = [w for w in am.get(f"{key}_CPPFLAGS", "").split() if not w.startswith("$(")]
    libs = [w for w in am.get(f"{key}_LDADD", "").split() if w.startswith("-l")]
    return Program(rel, name, sources, cpp, libs)
