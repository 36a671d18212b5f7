"""The MPI-3.1 C functions and their prototypes, read from the MPI's mpi.h
(Open MPI 4.1's, or MPICH 4's mpi_proto.h and mpio.h beside it).

Which functions are MPI-3.1: every `OMPI_DECLSPEC ... MPI_Xxx(...)` prototype
of Open MPI 4.1's mpi.h (MPI_VERSION 3, MPI_SUBVERSION 1, a complete MPI-3.1
implementation) before its `#if (!OMPI_OMIT_MPI1_COMPAT_DECLS ...)` block,
plus MPI_Aint_add and MPI_Aint_diff, which MPI-3.1 defines as functions and
Open MPI as macros. Left out: PMPI_ (profiling names), MPIX_/OMPI_
extensions, and the compat block, which holds exactly the ten MPI-1 functions
removed in MPI-3.0 (MPI_Address, MPI_Type_struct, ...). Deprecated functions
still in MPI-3.1 (MPI_Attr_get, MPI_Keyval_create, ...) are included.

MPICH 4 declares MPI-4.0 (and the removed MPI-1 functions) as well: its
prototypes are filtered by mpi31_functions.txt (the Open MPI set above), so
libmmpi offers the same functions on either MPI. MPICH defines the handle
conversions (MPI_Comm_c2f, ...) as macros: they are MACRO_FUNCTIONS there.
"""
import os
import re
from dataclasses import dataclass, field

COMPAT_BLOCK = "#if (!OMPI_OMIT_MPI1_COMPAT_DECLS"

# MPI-3.1 functions that Open MPI 4.1 defines as macros (mpi.h, "Aint helper macros").
OMPI_MACRO_FUNCTIONS = {
    "Aint_add": ("MPI_Aint", "MPI_Aint base, MPI_Aint disp"),
    "Aint_diff": ("MPI_Aint", "MPI_Aint addr1, MPI_Aint addr2"),
}
# MPI-3.1 functions that MPICH 4 defines as macros (mpi.h: handles are ints).
MPICH_MACRO_FUNCTIONS = {}
# The functions the parsed mpi.h declares beyond MPI-3.1 (MPICH 4: MPI-4.0 and
# the removed MPI-1 functions), {name: Proto}: the transparent layer refuses
# those that communicate (gen_transparent.refusals). Filled by parse_mpi_h.
BEYOND_MPI31 = {}
for _k, _v in (("Comm", "comm"), ("Type", "datatype"), ("Group", "group"), ("Info", "info"),
               ("Request", "request"), ("Op", "op"), ("Errhandler", "errhandler"),
               ("Win", "win"), ("Message", "message")):
    MPICH_MACRO_FUNCTIONS[f"{_k}_c2f"] = ("MPI_Fint", f"MPI_{_k if _k != 'Type' else 'Datatype'} {_v}")
    MPICH_MACRO_FUNCTIONS[f"{_k}_f2c"] = (f"MPI_{_k if _k != 'Type' else 'Datatype'}", f"MPI_Fint {_v}")
# The functions the parsed mpi.h defines as macros (one of the two above):
# filled by parse_mpi_h, read by the generators (no MPI_ definition of them).
MACRO_FUNCTIONS = {}
# The functions the parsed mpi.h declares beyond MPI-3.1 (MPICH 4: MPI-4.0 and
# the removed MPI-1 functions), {name: Proto}: the transparent layer refuses
# those that communicate (gen_transparent.refusals). Filled by parse_mpi_h.
BEYOND_MPI31 = {}
MPI31_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi31_functions.txt")


def mpi31_names():
    with open(MPI31_LIST, encoding="utf-8") as f:
        return {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}


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


def _read_c(path):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    return re.sub(r'"(\\.|[^"\\])*"', '""', src)  # deprecation messages hold ';'


def parse_mpi_h(path):
    """Returns {name: Proto} for every MPI-3.1 C function (see the module doc)."""
    src = _read_c(path)
    if "MPICH_VERSION" in src:
        return _parse_mpich(path)
    cut = src.find(COMPAT_BLOCK)
    if cut < 0:
        raise ValueError(f"{path}: no '{COMPAT_BLOCK}' block and no MPICH_VERSION: "
                         f"neither Open MPI 4.x's nor MPICH 4's mpi.h?")
    pat = re.compile(
        r"OMPI_DECLSPEC\s+([\w\s\*]*?)\bMPI_(\w+)\s*\(([^;]*?)\)\s*"
        r"(?:__mpi_interface_deprecated__\([^;]*?\))?\s*;",
        re.S,
    )
    return _collect(path, src[:cut], pat, OMPI_MACRO_FUNCTIONS, None)


def _parse_mpich(path):
    here = os.path.dirname(path)
    body = "".join(_read_c(os.path.join(here, f)) for f in ("mpi_proto.h", "mpio.h"))
    # ROMIO's request type is MPICH's own (mpio.h: #define MPIO_Request MPI_Request).
    body = re.sub(r"\bMPIO_Request\b", "MPI_Request", body)
    pat = re.compile(
        r"^([A-Za-z_][\w \*]*?)\bMPI_(\w+)\s*\(([^;]*?)\)\s*"
        r"(?:MPICH_ATTR_\w+\([^()]*\)\s*)*(?:MPICH|ROMIO)_API_PUBLIC\s*;",
        re.S | re.M,
    )
    return _collect(path, body, pat, MPICH_MACRO_FUNCTIONS, mpi31_names())


def _proto(m):
    ret, name, plist = _norm_type(m.group(1)), m.group(2), m.group(3)
    p = Proto(name=name, ret=ret)
    parts = [s.strip() for s in plist.split(",")]
    if parts == ["void"]:
        parts = []
    for s in parts:
        if s == "...":
            p.varargs = True
        else:
            p.params.append(_parse_param(s, name))
    return p


def _collect(path, body, pat, macros, only):
    MACRO_FUNCTIONS.clear()
    MACRO_FUNCTIONS.update(macros)
    BEYOND_MPI31.clear()
    protos = {}
    for m in pat.finditer(body):
        if only is not None and m.group(2) not in only:
            if m.group(2) not in BEYOND_MPI31 and m.group(2) not in macros:
                try:
                    BEYOND_MPI31[m.group(2)] = _proto(m)
                except ValueError:
                    pass  # an unnamed parameter: not a function the layer can define
            continue
        name = m.group(2)
        if name in protos:
            if only is not None:
                continue  # MPICH declares the MPI-IO error handler calls in both headers
            raise ValueError(f"{path}: MPI_{name} declared twice")
        protos[name] = _proto(m)
    for name, (ret, plist) in macros.items():
        if name in protos and only is None:
            raise ValueError(f"{path}: MPI_{name} is now a function; drop it from MACRO_FUNCTIONS")
        # MPICH's mpi.h defines the macro after the prototype: the macro is what callers get.
        protos[name] = Proto(name=name, ret=ret,
                             params=[_parse_param(s, name) for s in plist.split(",")])
    if only is not None and set(protos) != only:
        raise ValueError(f"{path}: MPI-3.1 functions not found: {sorted(only - set(protos))}")
    if len(protos) < 400:
        raise ValueError(f"{path}: only {len(protos)} MPI functions found: parse error?")
    return protos
