#!/usr/bin/env bash
# Inside the rxe guest (rxe-guest.sh): zipper-bench p2p --local with the
# native-verbs reference (perftest on the rxeA <-> rxe_zA wire) beside the OSU
# benchmarks forwarded A -> zipperd -> B over the verbs link, and over TCP on
# the same addresses, for ratios. Soft-RoCE under TCG says nothing absolute;
# the ratios show whether the relay adds copies or waits. perftest is ONE hop
# (subnet A only); the forwarded runs cross TWO (10.1.0.1 -> zipperd on
# 10.1.0.254 / 10.2.0.254 -> 10.2.0.1) plus zipperd.
#
#   guest-bench.sh BIN_DIR [LAT_ITERS] [BW_ITERS]
#
# Per forwarded variant, two driver runs: latency over BENCH_LAT_SIZES with
# -i LAT_ITERS -x 20, and BENCH_BW_BENCHES over BENCH_BW_SIZES with
# -i BW_ITERS -x 2 -W 16 (perftest then sends BW_ITERS x 16 messages per size).
# The first variant also runs the native MPI runs (mpirun -np 2 in the guest,
# shared memory) and perftest; the others only the forwarded runs. Prints each
# CSV (zipper-bench p2p's columns), then one table joining perftest and the
# forwarded variants. Exits 1 when a run failed, 2 on a usage error.
#
# Environment (all optional):
#   BENCH_FORWARDED   forwarded variants (default "verbs tcp"); verbs-sends:
#                     verbs with ZIPPER_VERBS_WRITE_MIN=0 (chunked SENDs only)
#   BENCH_PERFTEST=0  no perftest
#   BENCH_LAT_SIZES   default 8:65536
#   BENCH_BW_SIZES    default 65536:1048576
#   BENCH_BW_BENCHES  default bw,bibw
#   BENCH_TIMEOUT     seconds per single run (default 300)
set -euo pipefail
PROG=${0##*/}
usage_error() { echo "$PROG: $*" >&2; exit 2; }
(($# >= 1 && $# <= 3)) || usage_error "usage: $PROG BIN_DIR [LAT_ITERS] [BW_ITERS]"
bin=$1 lat_iters=${2:-500} bw_iters=${3:-20}
[[ ${ZIPPER_RXE_GUEST:-0} == 1 ]] || usage_error "run me inside rxe-guest.sh"
[[ -x $bin/zipper-bench ]] || usage_error "no zipper-bench in '$bin'"
[[ $lat_iters =~ ^[1-9][0-9]*$ && $bw_iters =~ ^[1-9][0-9]*$ ]] ||
    usage_error "LAT_ITERS and BW_ITERS must be positive integers, got '$lat_iters' '$bw_iters'"
lat_sizes=${BENCH_LAT_SIZES:-8:65536}
bw_sizes=${BENCH_BW_SIZES:-65536:1048576}
bw_benches=${BENCH_BW_BENCHES:-bw,bibw}
variants=${BENCH_FORWARDED:-verbs tcp}
timeout=${BENCH_TIMEOUT:-300}

out=$(mktemp -d /tmp/guest-bench.XXXXXX)
common=(--local --forwarder-a 10.1.0.254:7471 --forwarder-b 10.2.0.254:7471 --timeout "$timeout")
# shellcheck disable=SC2054 # the commas belong to --perftest
perftest=(--perftest rxe_zA,rxeA,10.1.0.254 --perftest-gid 1)
rc=0 first=1
for variant in $variants; do
    # zipperd reads no ZIPPER_VERBS_* variable: its setting goes as a flag.
    zipperd_set=()
    case $variant in
        verbs | tcp) unset ZIPPER_VERBS_WRITE_MIN ;;
        verbs-sends)
            export ZIPPER_VERBS_WRITE_MIN=0
            zipperd_set=(--zipperd-arg=--verbs-write-min=0)
            ;;
        *) usage_error "BENCH_FORWARDED: unknown variant '$variant' (want verbs, tcp, verbs-sends)" ;;
    esac
    extra=(--modes forwarded) what=''
    if ((first)); then
        extra=() what=', with the native runs'
        [[ ${BENCH_PERFTEST:-1} == 0 ]] || extra=("${perftest[@]}") what+=' and perftest'
    fi
    first=0
    for part in lat bw; do
        if [[ $part == lat ]]; then
            args=(--bench latency -m "$lat_sizes" -i "$lat_iters" -x 20)
        else
            args=(--bench "$bw_benches" -m "$bw_sizes" -i "$bw_iters" -x 2 -W 16)
        fi
        cmd=("$bin/zipper-bench" p2p "${common[@]}" --link "${variant%-sends}" "${zipperd_set[@]}" "${extra[@]}" "${args[@]}"
            --out-dir "$out/$variant.$part")
        echo "== forwarded over $variant$what: ${cmd[*]#"$bin/"}"
        "${cmd[@]}" || rc=1
        echo "-- $variant.$part.csv"
        cat "$out/$variant.$part/p2p-real.csv" 2>/dev/null || echo "(no CSV)"
    done
done

# One table: perftest (one hop) and every forwarded variant (two hops).
echo "== perftest (one hop, rxeA -> rxe_zA) vs forwarded (two hops through zipperd); latency us, bw/bibw MB/s (1e6 B)"
for variant in $variants; do
    for part in lat bw; do
        f=$out/$variant.$part/p2p-real.csv
        [[ ! -f $f ]] || awk -F, -v v="$variant" 'NR > 1 && $1 != "zipperd" { print v, $1, $2, $5, $9 }' "$f"
    done
done | awk -v variants="$variants" '
    BEGIN { nv = split(variants, vs, " ") }
    { key = $2 " " $3; if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
      fwd[$1, key] = $4; if ($5 != "") perf[key] = $5 }
    function r(a, b) { return (a != "" && b != "" && b + 0 > 0) ? sprintf("%.3f", a / b) : "" }
    END {
        line = "benchmark,size_bytes,perftest"
        for (i = 1; i <= nv; i++) line = line ",fwd_" vs[i]
        for (i = 1; i <= nv; i++) line = line "," vs[i] "_over_perftest"
        print line
        for (k = 1; k <= n; k++) {
            split(keys[k], kk, " ")
            line = kk[1] "," kk[2] "," perf[keys[k]]
            for (i = 1; i <= nv; i++) line = line "," fwd[vs[i], keys[k]]
            for (i = 1; i <= nv; i++) line = line "," r(fwd[vs[i], keys[k]], perf[keys[k]])
            print line
        }
    }'
exit "$rc"
