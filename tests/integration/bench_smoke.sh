#!/usr/bin/env bash
# zipper-bench on the emulation, small sizes, few iterations.
#   coll: at 2+2 on 8..64 bytes (barrier, allreduce): every algorithm and n
#         the library lists must have a measured row for every size, next to
#         the native rows, with the model's prediction; the PNGs must exist.
#   p2p:  latency and bw on 8..64 bytes: native A, native B and forwarded
#         values and their ratios for every size; the PNGs must exist.
# usage: bench_smoke.sh BIN_DIR coll|p2p. Exit 77 (skipped) without the emulation.
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
if [[ $what == p2p ]]; then
    "$bin/zipper-bench" p2p --links unshaped --bench latency,bw -m 8:64 -i 50 -x 5 --out-dir "$dir"
    /usr/bin/python3 - "$dir" <<'PY'
import csv, os, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(d, "p2p.csv"))))
for bench in ("latency", "bw"):
    got = {r["size_bytes"] for r in rows if r["benchmark"] == bench}
    assert got == {"8", "16", "32", "64"}, f"{bench}: sizes {got}"
    for r in rows:
        for col in ("native_a", "native_b", "forwarded"):
            assert float(r[col]) > 0, r
        a = float(r["forwarded"]) / float(r["native_a"])
        assert abs(float(r["fwd_over_native_a"]) - a) < 0.01, r
    assert os.path.getsize(os.path.join(d, f"p2p-{bench}.png")) > 0
print("PASS bench p2p smoke:", len(rows), "rows")
PY
    exit 0
fi
[[ $what == coll ]] || { echo "bench_smoke: unknown benchmark '$what'" >&2; exit 2; }
"$bin/zipper-bench" coll --layout 2+2 --bench barrier,allreduce --sizes 8:64 --rate-a '' \
    --rate-b '' --out-dir "$dir" -- -i 5 -x 1
"$bin/zipper-tune" --list-algorithms --collectives barrier,allreduce >"$dir/algos.json"
/usr/bin/python3 - "$dir" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(d, "coll.csv"))))
algos = json.load(open(os.path.join(d, "algos.json")))
for bench, sizes in (("barrier", {"0"}), ("allreduce", {"8", "16", "32", "64"})):
    want = {("native", ""), ("auto", "")}
    for a in algos[bench]:
        want |= {(a["name"], str(n)) for n in ([1, 2] if a["takes_senders"] else [""])}
    for alg, n in want:
        got = {r["size"] for r in rows if r["bench"] == bench and r["algorithm"] == alg and r["n"] == n}
        assert got == sizes, f"{bench} {alg} n={n}: sizes {got}, want {sizes}"
    for r in rows:
        if r["bench"] == bench:
            assert float(r["avg_us"]) > 0, r
            if r["algorithm"] not in ("native", "auto"):
                assert float(r["predicted_us"]) > 0, r
    assert os.path.getsize(os.path.join(d, f"coll-{bench}.png")) > 0
print("PASS bench coll smoke:", len(rows), "rows")
PY
