#!/bin/bash
# A/B: base build vs this branch, alternating, shaped 1/1 Gbit/s, k=1 and k=2.
# usage: ab.sh BASE_BIN NEW_BIN ROUNDS OUT.csv
set -u
base=$1 new=$2 rounds=$3 out=$4
echo "round,k,build,bench,value" > "$out"
"$new/zipper-emulate" up --nodes-a 2 --nodes-b 2 --zippers 2 --rate-a 1gbit --rate-b 1gbit >/dev/null
for r in $(seq 1 "$rounds"); do
  for k in 1 2; do
    for b in base new; do
      bin=$base; [ $b = new ] && bin=$new
      lat=$("$bin/zipper-run" --emulated --zippers $k -x 1 -y 1 --nodes-a 2 --nodes-b 2 --timeout 300 -- \
            "$bin/osu_latency" -m 8:8 2>/dev/null | awk '$1=="8"{print $2}')
      bw=$("$bin/zipper-run" --emulated --zippers $k -x 1 -y 1 --nodes-a 2 --nodes-b 2 --timeout 300 -- \
            "$bin/osu_bw" -m 4194304:4194304 2>/dev/null | awk '$1=="4194304"{print $2}')
      echo "$r,$k,$b,latency_us,$lat" >> "$out"
      echo "$r,$k,$b,bw_MBps,$bw" >> "$out"
      echo "round $r k=$k $b: lat ${lat}us bw ${bw}MB/s load $(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
done
