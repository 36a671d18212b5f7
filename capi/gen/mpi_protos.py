"""The MPI-3.1 C functions and their prototypes, read from Open MPI's mpi.h.

Which functions are MPI-3.1: every `OMPI_DECLSPEC ... MPI_Xxx(...)` prototype
of Open MPI 4.1's mpi.h (MPI_VERSION 3, MPI_SUBVERSION 1, a complete MPI-3.1
implementation) before its `#if (!OMPI_OMIT_MPI1_COMPAT_DECLS ...)` block,
plus MPI_Aint_add and MPI_Aint_diff, which MPI-3.1 defines as functions and
Open MPI as macros. Left out: PMPI_ (profiling names), MPIX_/OMPI_
extensions, and the compat block, which holds exactly the ten MPI-1 functions
removed in MPI-3.0 (MPI_Address, MPI_Type_struct, ...). Deprecated functions
still in MPI-3.1 (MPI_Attr_get, MPI_Keyval_create, ...) are included.
"""
import re
from dataclasses import dataclass, field

COMPAT_BLOCK = "#if (!OMPI_OMIT_MPI1_COMPAT_DECLS"

# MPI-3.1 functions that Open MPI 4.1 defines as macros (mpi.h, "Aint helper macros").
MACRO_FUNCTIONS = {
    "Aint_add": ("MPI_Aint", "MPI_Aint base, MPI_Aint disp"),
    "Aint_diff": ("MPI_Aint", "MPI_Aint addr1, MPI_Aint addr2"),
}


@dataclass
class Param:
    text: str  # as written in mpi.h, e.g. "const int recvcounts[]"
    ctype: str  # normalised type, arrays as "[]", e.g. "const int[]"
    name: str


@dataclass
class Proto:
    name: str  # without the MPI_ prefix, e.g. "Type_vector"
    ret: str  # return type, e.g. "int", "double", "MPI_Comm"
    params: list = field(default_factory=list)
    varargs: bool = False

    def c_params(self, prefix=""):
        """The parameter list as C source (for a definition or a declaration)."""
        ps = [p.text for p in self.params] + (["..."] if self.varargs else [])
        return ", ".join(ps) if ps else "void"

    def arg_names(self):
        return ", ".join(p.name for p in self.params)


def _norm_type(t):
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s*\*\s*", "*", t)
    return t


def _parse_param(text, fn):
    text = re.sub(r"\s+", " ", text).strip()
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[[^\]]*\])*)$", text)
    if not m or not m.group(1).strip():
        raise ValueError(f"MPI_{fn}: cannot parse parameter '{text}' (unnamed?)")
    base, name, arr = m.group(1), m.group(2), m.group(3)
    ctype = _norm_type(base) + ("[]" * arr.count("[") if arr else "")
    if arr.count("[") > 1:  # int ranges[][3]
        ctype = _norm_type(base) + arr.replace(" ", "")
    if name.endswith("weights") and arr == "[]":
        # Dist-graph weights may be the sentinels MPI_UNWEIGHTED ((int *) 2) and
        # MPI_WEIGHTS_EMPTY: declared as a pointer (the same type), not an array,
        # which GCC 12 takes to point at readable ints (-Wstringop-overread on
        # every call that passes a sentinel).
        text = f"{_norm_type(base)}* {name}"
    return Param(text=text, ctype=ctype, name=name)


def parse_mpi_h(path):
    """Returns {name: Proto} for every MPI-3.1 C function (see the module doc)."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)  # deprecation messages hold ';'
    cut = src.find(COMPAT_BLOCK)
    if cut < 0:
        raise ValueError(f"{path}: no '{COMPAT_BLOCK}' block: not Open MPI 4.x's mpi.h?")
    body = src[:cut]
    protos = {}
    pat = re.compile(
        r"OMPI_DECLSPEC\s+([\w\s\*]*?)\bMPI_(\w+)\s*\(([^;]*?)\)\s*"
        r"(?:__mpi_interface_deprecated__\([^;]*?\))?\s*;",
        re.S,
    )
    for m in pat.finditer(body):
        ret, name, plist = _norm_type(m.group(1)), m.group(2), m.group(3)
        if name in protos:
            raise ValueError(f"{path}: MPI_{name} declared twice")
        p = Proto(name=name, ret=ret)
        parts = [s.strip() for s in plist.split(",")]
        if parts == ["void"]:
            parts = []
        for s in parts:
            if s == "...":
                p.varargs = True
            else:
                p.params.append(_parse_param(s, name))
        protos[name] = p
    for name, (ret, plist) in MACRO_FUNCTIONS.items():
        if name in protos:
            raise ValueError(f"{path}: MPI_{name} is now a function; drop it from MACRO_FUNCTIONS")
        protos[name] = Proto(name=name, ret=ret,
                             params=[_parse_param(s, name) for s in plist.split(",")])
    if len(protos) < 400:
        raise ValueError(f"{path}: only {len(protos)} MPI functions found: parse error?")
    return protos
