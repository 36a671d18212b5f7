"""Status of every MPI-3.1 function in libmmpi: implemented, passthrough,
unsupported or planned (classification.txt plus a scan for hand-written
MMPI_ definitions)."""
import os
import re
from dataclasses import dataclass

STATUSES = ("passthrough", "unsupported", "planned")
SOURCE_DIRS = ("capi", "client", "collectives")
SOURCE_EXT = (".c", ".cc", ".cpp")

# A definition, not a call or a declaration: return type, name, parameters, '{'.
# mmpi_impl_Xxx is the hand-written body of an MMPI_Xxx whose public wrapper
# (error handler at the boundary, capi/errhandler.h) is generated.
_DEF = re.compile(r"^[ \t]*(?:int|double|MPI_\w+)[ \t]+(MMPI|mmpi_impl)_(\w+)[ \t]*\([^;{}]*\)\s*\{",
                  re.M)


class ClassificationError(Exception):
    pass


@dataclass
class Entry:
    name: str
    status: str  # implemented | passthrough | unsupported | planned
    reason: str = ""  # why unsupported, or a note on a pass-through
    where: str = ""  # implemented: the file with the definition
    wrapped: bool = False  # implemented as mmpi_impl_<name>: the MMPI_ wrapper is generated


def parse_classification(path, known):
    """{name: (status, reason)} from classification.txt; raises on a bad line."""
    out = {}
    errors = []
    line_re = re.compile(r'^(\w+)\s+(\w+)(?:\s+"([^"]*)")?\s*$')
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for no, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = line_re.match(line)
        if not m:
            errors.append(f"{path}:{no}: cannot parse '{line}'")
            continue
        name, status, reason = m.group(1), m.group(2), m.group(3) or ""
        if status not in STATUSES:
            errors.append(f"{path}:{no}: MPI_{name}: unknown status '{status}'")
        elif name not in known:
            errors.append(f"{path}:{no}: MPI_{name} is not an MPI-3.1 function in mpi.h")
        elif name in out:
            errors.append(f"{path}:{no}: MPI_{name} classified twice")
        elif status == "unsupported" and not reason:
            errors.append(f"{path}:{no}: MPI_{name}: unsupported needs a \"reason\"")
        else:
            out[name] = (status, reason)
    if errors:
        raise ClassificationError("\n".join(errors))
    return out


def scan_implemented(root):
    """{name: (relative file, wrapped)} of hand-written MMPI_ (or wrapped
    mmpi_impl_) definitions under root's
    capi/, client/ and collectives/ (generated files live in the build tree)."""
    found = {}
    for d in SOURCE_DIRS:
        top = os.path.join(root, d)
        for dirpath, _, files in os.walk(top):
            if os.path.relpath(dirpath, root).startswith(os.path.join("capi", "gen")):
                continue
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                p = os.path.join(dirpath, f)
                with open(p, encoding="utf-8") as fh:
                    text = fh.read()
                for m in _DEF.finditer(text):
                    found.setdefault(m.group(2), (os.path.relpath(p, root), m.group(1) != "MMPI"))
    return found


def classify(protos, classification_path, root):
    """[Entry] for every MPI-3.1 function, sorted by name; raises
    ClassificationError listing every unclassified or doubly classified one."""
    table = parse_classification(classification_path, protos)
    impl = scan_implemented(root)
    errors = []
    entries = []
    for name in sorted(protos):
        if name in impl:
            # A hand-written function needs no line: any line left for it is
            # stale, a planned one included (it would say "not yet
            # implemented" in the coverage table's history of the file).
            if name in table:
                st = table[name][0]
                what = "a stale 'planned' line" if st == "planned" else f"classified '{st}'"
                errors.append(f"MPI_{name}: hand-written in {impl[name][0]} but {what} in "
                              f"{classification_path}: remove that line")
            entries.append(Entry(name, "implemented", where=impl[name][0], wrapped=impl[name][1]))
        elif name in table:
            st, reason = table[name]
            entries.append(Entry(name, st, reason))
        else:
            errors.append(f"MPI_{name}: not classified in {classification_path} and no "
                          f"hand-written MMPI_{name} found")
    extra = sorted(set(impl) - set(protos))
    if errors:
        raise ClassificationError("\n".join(errors))
    return entries, extra
