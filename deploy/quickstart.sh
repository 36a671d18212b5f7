#!/usr/bin/env bash
# The first README command: install, build, and run an MPI program across two
# emulated clusters (2 nodes each, A at 1 Gbit/s, B at 4 Gbit/s) that can reach
# each other only through zipperd.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/install-deps.sh"
"$root/deploy/build.sh"
bin=$root/build/bin
"$bin/zipper-emulate" up --nodes-a 2 --nodes-b 2 --rate-a 1gbit --rate-b 4gbit
echo
echo "== hello_ring: 2 ranks in cluster A + 2 ranks in cluster B, through zipperd =="
"$bin/zipper-run" --emulated --nodes-a 2 --nodes-b 2 -x 2 -y 2 --timeout 120 -- "$bin/hello_ring"
echo
echo "== osu_latency across the clusters (rank 0 in A, rank 1 in B) =="
"$bin/zipper-run" --emulated --nodes-a 2 --nodes-b 2 -x 1 -y 1 --timeout 300 -- "$bin/osu_latency" -m 1:65536
