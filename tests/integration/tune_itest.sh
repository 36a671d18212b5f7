#!/usr/bin/env bash
# zipper-tune on the emulation (docs/tuning.md).
# usage: tune_itest.sh BIN_DIR quick|measure
#   quick    zipper-tune --quick at 2+2 (2 nodes per cluster), then a second
#            job with MMPI_TUNING_FILE=<the written file> and --check: libmmpi
#            must read every choice of the report back (algorithm, n, segment);
#            the report must hold parameters, candidates and experiment counts.
#   measure  links shaped by TBF (A 200 Mbit/s, B 800 Mbit/s): the measured G
#            of the forwarded class and of intra-A must give 200 Mbit/s
#            within 25 % (tolerance for a loaded 2-core machine; the benchmark
#            target is 15 %).
# Exit 77 (CTest: skipped) when the emulation cannot be built here.
set -euo pipefail
bin=$1 what=$2
if ! reason=$("$bin/zipper-emulate" check 2>&1); then
    echo "SKIP: emulated clusters unavailable: $reason"
    exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset MMPI_TUNING_FILE
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run=("$bin/zipper-run" -x 2 -y 2 --emulated --nodes-a 2 --nodes-b 2 --timeout 280 --)
case $what in
quick)
    "$bin/zipper-emulate" up --nodes-a 2 --nodes-b 2 --force >/dev/null
    "${run[@]}" "$bin/zipper-tune" --quick --tuning-out "$dir/t.toml" --report "$dir/r.json"
    MMPI_TUNING_FILE="$dir/t.toml" "${run[@]}" "$bin/zipper-tune" --check "$dir/r.json"
    /usr/bin/python3 - "$dir/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
colls = {p["collective"] for p in r["points"]}
want = {"barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv"}
assert colls == want, f"collectives tuned: {colls}"
for k in ("intra_low", "intra_high", "forwarded"):
    assert r["links"][k]["G_us_per_byte"] > 0, f"{k}: no G"
e = r["experiments"]
assert 0 < e["search"] < e["full_grid"], e
for p in r["points"]:
    assert p["candidates"] and all(c["measured_us"] > 0 and c["predicted_us"] > 0
                                   for c in p["candidates"]), p
    assert p["tuned_us"] <= p["builtin_us"], p
print("PASS tune quick:", e, "model median error", r["model_median_relative_error"])
PY
    ;;
measure)
    "$bin/zipper-emulate" up --nodes-a 2 --nodes-b 2 --rate-a 200mbit --rate-b 800mbit --force >/dev/null
    "${run[@]}" "$bin/zipper-tune" --quick --measure-only --report "$dir/r.json"
    /usr/bin/python3 - "$dir/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
for k in ("forwarded", "intra_low"):
    mbit = r["links"][k]["G_mbit_per_s"]
    print(f"{k}: G gives {mbit:.0f} Mbit/s (shaped: 200)")
    if abs(mbit - 200) > 0.25 * 200:
        bad.append(k)
assert not bad, f"G off by more than 25 % for {bad}"
print("PASS tune measure")
PY
    ;;
*)
    echo "tune_itest: unknown test '$what'" >&2
    exit 2
    ;;
esac
