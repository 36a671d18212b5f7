#!/usr/bin/env python3
"""Writes the unported twin of a ported test program: every MMPI_ call, the
MMPI_COMM_WORLD / MMPI_COMM_SELF handles and the mmpi header or module
become plain MPI's, as the program was before its port (the same
programs, unmodified, through libmmpi_transparent).

  unprefix.py --out DIR FILE...

C (.c, .h): `#include <mmpi.h>` becomes <mpi.h> (plus "mmpix_weak.h" where
the program uses zipper's MMPIX_ extensions), `MMPI_Xxx(` becomes `MPI_Xxx(`,
and ITEST_TRANSPARENT is defined first (the checks that libmmpi refuses
handles it did not make have no meaning there). Strings naming environment
variables (MMPI_NP_LOW, ...) are left alone. Fortran (.f, .f90): `use mmpi`,
`include 'mmpif.h'` and every MMPI_ name, in any case. Exit status 1 naming
the file if an MMPI_ name is left over.
"""
import argparse
import os
import re
import sys

C_RULES = [
    (re.compile(r"#include <mmpi\.h>"), "#include <mpi.h>"),
    (re.compile(r"\bMMPI_COMM_(WORLD|SELF)\b"), r"MPI_COMM_\1"),
    (re.compile(r"\bMMPI_([A-Z][a-z]\w*)\b"), r"MPI_\1"),
]
C_LEFT = re.compile(r"\bMMPI_(COMM_\w+|[A-Z][a-z]\w*)\b")
F_RULES = [
    (re.compile(r"^(\s*use\s+)mmpi\b", re.I | re.M), r"\1mpi"),
    (re.compile(r"(include\s+['\"])mmpif\.h", re.I), r"\1mpif.h"),
    (re.compile(r"\bMMPI_(\w+)", re.I), r"MPI_\1"),
]
F_LEFT = re.compile(r"\bmmpi(_\w+|f\.h)?\b", re.I)


def convert(path, text):
    if path.endswith((".c", ".h")):
        for pat, rep in C_RULES:
            text = pat.sub(rep, text)
        if "MMPIX_" in text:
            text = text.replace("#include <mpi.h>", '#include <mpi.h>\n#include "mmpix_weak.h"', 1)
        left = C_LEFT.search(text)
        text = "#define ITEST_TRANSPARENT 1\n" + text
    else:
        for pat, rep in F_RULES:
            text = pat.sub(rep, text)
        code = "\n".join(ln.split("!")[0] for ln in text.splitlines()
                         if not re.match(r"^[cC*]", ln))
        left = F_LEFT.search(code)
    if left:
        raise SystemExit(f"unprefix: {path}: '{left.group(0)}' left after the transform")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for f in a.files:
        with open(f, encoding="utf-8") as fh:
            text = convert(f, fh.read())
        dst = os.path.join(a.out, os.path.basename(f))
        old = open(dst, encoding="utf-8").read() if os.path.exists(dst) else None
        if old != text:
            with open(dst, "w", encoding="utf-8") as fh:
                fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
