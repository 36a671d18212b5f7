#!/bin/bash
# Record of the run in docs/performance.md: M = a build of main, W = this branch; run as root under flock /tmp/zipper-emulation.lock
# A/B: main vs branch alternating, shaped 1/1 Gbit/s, 1+1, progress thread on (default)
M=/tmp/rmaprof-main/build/bin; W=/work/wt-rmaprof/build/bin
$W/zipper-emulate up --nodes-a 2 --nodes-b 2 --rate-a 1gbit --rate-b 1gbit >/tmp/rmaprof/up.log 2>&1 || { echo up failed; exit 1; }
L="-i 2000 -x 200"
run() { local who=$1 B=$2 label=$3; shift 3
  out=$($B/zipper-run --emulated -x 1 -y 1 --nodes-a 1 --nodes-b 1 --timeout 120 --transparent -- "$@" 2>&1)
  v=$(echo "$out" | grep -E '^[0-9]+\s+[0-9.]+$' | tail -1 | awk '{print $2}')
  echo "$r,$who,$label,$v,$(cut -d' ' -f1 /proc/loadavg)"; }
for r in 0 1 2; do
  if [ $((r%2)) = 0 ]; then order="main branch"; else order="branch main"; fi
  for who in $order; do B=$M; [ $who = branch ] && B=$W
    run $who $B osu_latency $B/osu_latency_native -m 8:8 $L
    run $who $B put_latency $B/osu_put_latency -s flush -c -m 8:8 $L
    run $who $B get_latency $B/osu_get_latency -s flush -c -m 8:8 $L
    run $who $B fop_latency $B/osu_fop_latency -s flush -c $L
    run $who $B cas_latency $B/osu_cas_latency -s flush -c $L
  done
done
