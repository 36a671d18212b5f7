#!/usr/bin/env bash
# Runs one mmpi_itest test across two clusters through zipperd.
# usage: run_itest.sh BIN_DIR emulated|local NP_LOW NP_HIGH NODES_A NODES_B TEST [PROGRAM]
# PROGRAM (default mmpi_itest) is a test program in BIN_DIR; it must print
# "PASS TEST ..." on success (TEST[,TEST...][@COMM]: one line per TEST).
# ITEST_SITES=NAME:N,... (local only): the job's
# sites instead of NP_LOW/NP_HIGH (zipper-run --sites, a zipperd leg per site).
# Exit 77 (CTest: skipped) when the emulation cannot be built here.
set -euo pipefail
bin=$1 mode=$2 x=$3 y=$4 na=$5 nb=$6 test=$7 prog=${8:-mmpi_itest}
# ITEST_MIN_MEM_GB: memory-heavy tests (> 2 GiB messages) skip where less is
# available than they need, instead of failing for want of memory.
if [[ -n ${ITEST_MIN_MEM_GB:-} ]]; then
    avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    if ((avail_kb < ITEST_MIN_MEM_GB * 1024 * 1024)); then
        echo "SKIP: needs ${ITEST_MIN_MEM_GB} GB of available memory, $((avail_kb / 1024 / 1024)) GB here"
        exit 77
    fi
fi
# ITEST_TIMEOUT: seconds zipper-run allows the job (long transfers set more).
legs=1
if [[ -n ${ITEST_SITES:-} ]]; then
    args=(--sites "$ITEST_SITES" --timeout "${ITEST_TIMEOUT:-240}")
    legs=$(tr ',' '\n' <<<"$ITEST_SITES" | wc -l)
else
    args=(-x "$x" -y "$y" --timeout "${ITEST_TIMEOUT:-240}")
fi
if [[ $mode == emulated ]]; then
    if ! reason=$("$bin/zipper-emulate" check 2>&1); then
        echo "SKIP: emulated clusters unavailable: $reason"
        exit 77
    fi
    "$bin/zipper-emulate" up --nodes-a "$na" --nodes-b "$nb" --zippers "${ITEST_ZIPPERS:-1}" \
        --force >/dev/null
    args+=(--emulated --nodes-a "$na" --nodes-b "$nb")
else
    # A port of our own, so that it never meets an emulation's zipperd nor
    # another run's on this shared host, and below the ephemeral range, where
    # no outgoing connection holds it (loopback_ports.py says why).
    port=$("$(dirname "$0")/loopback_ports.py" $((${ITEST_ZIPPERS:-1} * legs)))
    args+=(--local --port "$port")
fi
# k bridge nodes: ranks stripe over ITEST_ZIPPERS forwarders.
args+=(--zippers "${ITEST_ZIPPERS:-1}")
# Extra zipperd options for this test (CTest ENVIRONMENT), e.g. small pools.
for a in ${ITEST_ZIPPERD_ARGS:-}; do args+=("--zipperd-arg=$a"); done
# Unported programs through libmmpi_transparent: ITEST_TRANSPARENT
# names the library. The ranks get what zipper-run --transparent sets: the
# preload, MMPI_TRANSPARENT=1 and the stop component for a rank that starts
# Open MPI without the layer (zipper-transparent-check --env; docs/transparent.md).
if [[ -n ${ITEST_TRANSPARENT:-} ]]; then
    tenv=$("$bin/zipper-transparent-check" --env --lib "$ITEST_TRANSPARENT")
    while IFS= read -r kv; do args+=(--env "$kv"); done <<<"$tenv"
fi
# peerdeath kills a rank on purpose: cluster B fails, A must still report PASS.
[[ $test != peerdeath ]] || args+=(--grace 30)
log=$(mktemp)
map=$(mktemp)
trap 'rm -f "$log" "$map"' EXIT
# ITEST_RANK_MAP=interleaved: world ranks alternate between the clusters
# until one is full (zipper-run --rank-map, docs/placement.md); the program
# must pass as in block order.
if [[ ${ITEST_RANK_MAP:-} == interleaved ]]; then
    "${ITEST_PYTHON:-python3}" - "$x" "$y" >"$map" <<'EOF_MAP'
import json, sys
x, y = int(sys.argv[1]), int(sys.argv[2])
a, b = [], []
for r in range(x + y):
    (a if len(a) < x and (len(a) <= len(b) or len(b) == y) else b).append(r)
json.dump({"format": "zipper-rank-map", "version": 1,
           "sites": [{"name": "A", "ranks": a}, {"name": "B", "ranks": b}]}, sys.stdout)
EOF_MAP
    args+=(--rank-map "$map")
fi
rc=0
"$bin/zipper-run" "${args[@]}" -- "$bin/$prog" "$test" 2>&1 | tee "$log" || rc=$?
# TEST may name several of the program's tests, comma-separated, run in one
# job ("ring,many@split"): each must report its PASS line.
suffix=""
[[ $test != *@* ]] || suffix="@${test#*@}"
IFS=, read -r -a names <<<"${test%%@*}"
for name in "${names[@]}"; do
    if ! grep -q "^PASS $name$suffix " "$log"; then
        echo "run_itest: no 'PASS $name$suffix' line (zipper-run exit status $rc)"
        exit 1
    fi
done
# ITEST_LOG_REQUIRE / ITEST_LOG_REJECT (extended regular expressions): a line
# of the job's output must / must not match, e.g. a debug line naming the
# algorithm that a setting chose.
if [[ -n ${ITEST_LOG_REQUIRE:-} ]] && ! grep -qE -- "$ITEST_LOG_REQUIRE" "$log"; then
    echo "run_itest: no output line matches '$ITEST_LOG_REQUIRE'"
    exit 1
fi
if [[ -n ${ITEST_LOG_REJECT:-} ]] && grep -E -- "$ITEST_LOG_REJECT" "$log" | head -3 | grep .; then
    echo "run_itest: output lines (above) match '$ITEST_LOG_REJECT'"
    exit 1
fi
if [[ $test != peerdeath && $rc -ne 0 ]]; then
    echo "run_itest: zipper-run exited with status $rc"
    exit 1
fi
exit 0
