#!/usr/bin/env python3
"""The README's API paragraph against docs/api-coverage.md (generated from the
library's classification), so that the README cannot claim what is not so.

Checks:
  - the README's list of unsupported functions ("Unsupported are only the N
    functions of ... (...: `Name`, ...)") names exactly the rows api-coverage
    marks unsupported or planned, and N is their number;
  - every other function the README names in backticks (`Comm_dup`,
    `MPI_Pack`, `MMPI_Comm_free`) or names by prefix (`Win_*`) exists in
    api-coverage and is implemented or passed through there.
Usage: test_readme_coverage.py [README.md [api-coverage.md]] (default: this
checkout's). Exits 0 when they agree, 1 with one line per disagreement.
"""
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKING = ("implemented", "pass-through")


def coverage(path):
    """{name without MPI_: status} from api-coverage's table of all functions."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\| `MPI_(\w+)` \| ([a-z-]+) \|", line)
            if m:
                rows[m.group(1)] = m.group(2)
    return rows


def unsupported_list(readme):
    """(N, [names]) from the README's 'Unsupported are only the N functions' sentence."""
    m = re.search(r"Unsupported are only the (\d+) functions of[^(]*\(([^)]*)\)", readme)
    if not m:
        return None, [], None
    return int(m.group(1)), re.findall(r"`(\w+)`", m.group(2)), m.span()


def check(readme_path, coverage_path):
    errors = []
    rows = coverage(coverage_path)
    if len(rows) < 300:
        return [f"{coverage_path}: only {len(rows)} function rows parsed; the table changed form"]
    readme = open(readme_path, encoding="utf-8").read()
    found = unsupported_list(readme)
    if found[0] is None:
        return [f"{readme_path}: no sentence 'Unsupported are only the N functions of ... (...)'"]
    n, listed, span = found
    refused = sorted(k for k, v in rows.items() if v not in WORKING)
    if n != len(refused):
        errors.append(f"README says {n} unsupported functions, api-coverage has {len(refused)}")
    for name in sorted(set(listed) - set(refused)):
        errors.append(f"README lists {name} as unsupported; api-coverage: "
                      f"{rows.get(name, 'no such function')}")
    for name in sorted(set(refused) - set(listed)):
        errors.append(f"api-coverage marks {name} {rows[name]}; the README's list leaves it out")
    # Every other backticked name: `Xxx_yyy`, `MPI_Xxx`, `MMPI_Xxx` or a prefix `Xxx_*`.
    rest = readme[:span[0]] + readme[span[1]:]
    for token in sorted(set(re.findall(r"`(?:M?MPI_)?([A-Z][a-z]+(?:_\w*)?\*?)`", rest))):
        if token.endswith("*"):
            matched = [k for k in rows if k.startswith(token[:-1])]
            if not matched:
                errors.append(f"README names `{token}`: no function in api-coverage")
            for k in sorted(matched):
                if rows[k] not in WORKING:
                    errors.append(f"README names `{token}` as working; api-coverage marks {k} {rows[k]}")
        elif token in rows and rows[token] not in WORKING:
            errors.append(f"README names `{token}` as working; api-coverage marks it {rows[token]}")
    return errors


def mutated_fails(readme, cov):
    """The check must catch a disagreement: Win_create made unsupported in a
    copy of api-coverage, and the README's count changed in a copy of it."""
    with tempfile.TemporaryDirectory() as d:
        text = open(cov, encoding="utf-8").read()
        bad_cov = os.path.join(d, "api-coverage.md")
        with open(bad_cov, "w", encoding="utf-8") as f:
            f.write(text.replace("| `MPI_Win_create` | implemented |",
                                 "| `MPI_Win_create` | unsupported |"))
        errors = check(readme, bad_cov)
        if not any("Win_create" in e and "Win_*" in e for e in errors) or \
                not any("leaves it out" in e for e in errors):
            return [f"a coverage with Win_create unsupported was not caught: {errors}"]
        text = open(readme, encoding="utf-8").read()
        bad_readme = os.path.join(d, "README.md")
        with open(bad_readme, "w", encoding="utf-8") as f:
            f.write(re.sub(r"Unsupported are only the (\d+)",
                           lambda m: f"Unsupported are only the {int(m.group(1)) + 1}", text))
        if not check(bad_readme, cov):
            return ["a README with a wrong count of unsupported functions was not caught"]
    return []


def main(argv):
    readme = argv[1] if len(argv) > 1 else os.path.join(ROOT, "README.md")
    cov = argv[2] if len(argv) > 2 else os.path.join(ROOT, "docs", "api-coverage.md")
    errors = check(readme, cov) or mutated_fails(readme, cov)
    for e in errors:
        print(f"FAIL: {e}")
    if not errors:
        print(f"PASS: {readme} agrees with {cov}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
