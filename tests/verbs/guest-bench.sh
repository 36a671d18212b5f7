#!/usr/bin/env bash
# Inside the rxe guest (rxe-guest.sh): native-verbs reference (perftest on the
# rxeA <-> rxe_zA wire) beside the OSU benchmarks forwarded A -> zipperd -> B
# over the verbs link, and over TCP on the same addresses, for ratios.
# Soft-RoCE under TCG says nothing absolute; the ratios show whether the relay
# adds copies or waits.
#   guest-bench.sh BIN_DIR [LAT_ITERS] [BW_ITERS]
# BENCH_FORWARDED="verbs tcp verbs-sends" picks the forwarded variants
# (verbs-sends: verbs with ZIPPER_VERBS_WRITE_MIN=0, i.e. chunked SENDs only);
# BENCH_PERFTEST=0 skips perftest.
set -uo pipefail
bin=$1 lat_iters=${2:-500} bw_iters=${3:-20}
[[ ${ZIPPER_RXE_GUEST:-0} == 1 ]] || { echo "guest-bench.sh: run me inside rxe-guest.sh" >&2; exit 2; }
if [[ ${BENCH_PERFTEST:-1} == 1 ]]; then
echo "== perftest, rxeA -> rxe_zA (one hop, GID index 1, no RDMA CM)"
perf() { # tool args...
    local tool=$1
    shift
    "$tool" -d rxe_zA -x 1 -F "$@" >/tmp/perf-srv.log 2>&1 &
    local srv=$!
    sleep 1
    timeout 120 "$tool" -d rxeA -x 1 -F "$@" 10.1.0.254 2>&1 | grep -E '^ *[0-9]+ +[0-9]+' | tail -1
    wait "$srv"
}
echo "ib_send_lat 8 B: #bytes #iterations t_min[usec] t_max t_typical t_avg t_stdev 99% 99.9%"
perf ib_send_lat -s 8 -n "$lat_iters"
echo "ib_write_bw 64 KiB: #bytes #iterations BW_peak[MB/sec] BW_average[MB/sec] MsgRate[Mpps]"
perf ib_write_bw -s 65536 -n $((bw_iters * 20))
echo "ib_send_bw 64 KiB: #bytes #iterations BW_peak[MB/sec] BW_average[MB/sec] MsgRate[Mpps]"
perf ib_send_bw -s 65536 -n $((bw_iters * 20))
echo "ib_send_lat 8 B, sleeping on CQ events (-e): #bytes #iterations t_min t_max t_typical t_avg ..."
perf ib_send_lat -s 8 -n "$lat_iters" -e
fi
for variant in ${BENCH_FORWARDED:-verbs tcp}; do
    scheme=${variant%-sends}
    if [[ $variant == verbs-sends ]]; then export ZIPPER_VERBS_WRITE_MIN=0; else unset ZIPPER_VERBS_WRITE_MIN; fi
    echo "== forwarded over $variant: rank 0 in A -> zipperd -> rank 1 in B"
    run=("$bin/zipper-run" --local -x 1 -y 1 --forwarder-a "$scheme:10.1.0.254:7471"
        --forwarder-b "$scheme:10.2.0.254:7471" --timeout 300 --)
    "${run[@]}" "$bin/osu_latency" -m 8:65536 -i "$lat_iters" -x 20 2>&1 | grep -E '^#|^[0-9]' | grep -vE '^# (OSU|zipper)'
    "${run[@]}" "$bin/osu_bw" -m 65536:1048576 -i "$bw_iters" -x 2 -W 16 2>&1 | grep -E '^#|^[0-9]' | grep -vE '^# (OSU|zipper)'
done
