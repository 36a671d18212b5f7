#!/usr/bin/env bash
# Runs one mmpi_itest test across two clusters through zipperd.
# usage: run_itest.sh BIN_DIR emulated|local NP_LOW NP_HIGH NODES_A NODES_B TEST
# Exit 77 (CTest: skipped) when the emulation cannot be built here.
set -euo pipefail
bin=$1 mode=$2 x=$3 y=$4 na=$5 nb=$6 test=$7
if [[ $mode == emulated ]]; then
    if ! reason=$("$bin/zipper-emulate" check 2>&1); then
        echo "SKIP: emulated clusters unavailable: $reason"
        exit 77
    fi
    "$bin/zipper-emulate" up --nodes-a "$na" --nodes-b "$nb" --force >/dev/null
    exec "$bin/zipper-run" --emulated --nodes-a "$na" --nodes-b "$nb" -x "$x" -y "$y" \
        --timeout 240 -- "$bin/mmpi_itest" "$test"
fi
# Local mode: a port of our own so that it never meets an emulation's zipperd.
exec "$bin/zipper-run" --local --port 7479 -x "$x" -y "$y" --timeout 240 -- "$bin/mmpi_itest" "$test"
