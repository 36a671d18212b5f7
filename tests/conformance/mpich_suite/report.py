"""The tables: per directory (Markdown and CSV) and per run (CSV)."""

import csv
import os
from collections import OrderedDict


def _md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def summarize(dirs, runs, not_run, programs):
    """{dir: counts} from the finished runs.

    runs: list of dicts with dir, test, n, split, native (Outcome), zipper (Outcome), allowed.
    not_run: list of (dir, test, reason); programs: {dir: (listed, built)}."""
    rows = OrderedDict()
    for d in dirs:
        listed, built = programs.get(d, (0, 0))
        rows[d] = dict(dir=d, programs=listed, built=built, runs=0, native_pass=0, zipper_pass=0,
                       differences=0, allowed=0, zipper_only=0, not_run=0)
    for r in runs:
        c = rows[r["top"]]
        c["runs"] += 1
        c["native_pass"] += r["native"].passed
        c["zipper_pass"] += r["zipper"].passed
        if r["native"].passed and not r["zipper"].passed:
            c["allowed" if r["allowed"] else "differences"] += 1
        if r["zipper"].passed and not r["native"].passed:
            c["zipper_only"] += 1
    for top, _, _ in not_run:
        rows[top]["not_run"] += 1
    return rows


def write(out, dirs, runs, not_run, programs, command, elapsed):
    rows = summarize(dirs, runs, not_run, programs)
    fields = ["dir", "programs", "built", "runs", "native_pass", "zipper_pass", "differences",
              "allowed", "zipper_only", "not_run"]
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows.values():
            w.writerow(r)
        tot = {k: sum(r[k] for r in rows.values()) for k in fields[1:]}
        w.writerow(dict(tot, dir="total"))
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dir", "test", "np", "split", "native", "native_s", "zipper", "zipper_s",
                    "allowed", "first_error", "native_first_error"])
        for r in runs:
            w.writerow([r["top"], r["test"], r["n"], r["split"], r["native"].status,
                        f"{r['native'].seconds:.1f}", r["zipper"].status, f"{r['zipper'].seconds:.1f}",
                        r["allowed"] or "", r["zipper"].first_error, r["native"].first_error])
        for top, test, reason in not_run:
            w.writerow([top, test, "", "", "NOT RUN", "", "NOT RUN", "", reason, "", ""])

    md = ["# MPICH test suite: native against zipper", "",
          f"Command: `{command}` ({elapsed:.0f} s).", "",
          "A run passes when it prints \"No Errors\" and exits 0 (MPICH's rule). "
          "*runs*: testlist entries × splits; native runs use the split's total.", "",
          "| directory | programs | built | runs | native pass | zipper pass | differences | "
          "allowed to differ | zipper only | not run |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in list(rows.values()) + [dict(tot, dir="**total**")]:
        md.append("| " + " | ".join(str(r[k]) for k in fields) + " |")
    md.append("")
    for d in dirs:
        diffs = [r for r in runs if r["top"] == d and r["native"].passed and not r["zipper"].passed]
        if diffs:
            md += [f"## {d}: differences", "", "| test | split | zipper | first error line |",
                   "|---|---|---|---|"]
            for r in diffs:
                err = r["zipper"].first_error + (f" (allowed: {r['allowed']})" if r["allowed"] else "")
                md.append(f"| `{_md_escape(r['test'])}` | {r['split']} | {r['zipper'].status} | "
                          f"{_md_escape(err)} |")
            md.append("")
    nr = [x for x in not_run]
    if nr:
        md += ["## Not run, with the reason", "", "| test | reason |", "|---|---|"]
        for top, test, reason in nr:
            md.append(f"| `{_md_escape(test)}` | {_md_escape(reason)} |")
        md.append("")
    nf = [r for r in runs if not r["native"].passed]
    if nf:
        md += ["## Failing natively (not counted against zipper)", "",
               "| test | np | native first error line |", "|---|---|---|"]
        seen = set()
        for r in nf:
            key = (r["test"], r["n"])
            if key not in seen:
                seen.add(key)
                md.append(f"| `{_md_escape(r['test'])}` | {r['n']} | "
                          f"{_md_escape(r['native'].first_error)} |")
        md.append("")
    with open(os.path.join(out, "conformance.md"), "w") as f:
        f.write("\n".join(md))
    return rows
