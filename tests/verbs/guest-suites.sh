#!/usr/bin/env bash
# Runs integration suites over the verbs link inside the rxe guest
# (rxe-guest.sh), one zipperd per run started by zipper-run with verbs
# listeners on both subnets:
#   A ranks (10.1.0.1, rxeA) -> verbs:10.1.0.254:7471 (rxe_zA) zipperd
#   B ranks (10.2.0.1, rxeB) -> verbs:10.2.0.254:7471 (rxe_zB) zipperd
#
#   guest-suites.sh BIN_DIR GROUP...     GROUP = X+Y:PROGRAM:SUITE[,SUITE...]
#
# Each suite passes when the program prints "PASS SUITE" and zipper-run exits
# 0 (the programs verify every byte). Prints one line per suite and a summary;
# exits 1 if any suite failed. ZIPPER_SUITE_SCHEME=tcp runs the same over TCP
# (same addresses) for comparison.
set -uo pipefail
bin=$1
shift
[[ ${ZIPPER_RXE_GUEST:-0} == 1 ]] || { echo "guest-suites.sh: run me inside rxe-guest.sh" >&2; exit 2; }
scheme=${ZIPPER_SUITE_SCHEME:-verbs}
fa=$scheme:10.1.0.254:7471 fb=$scheme:10.2.0.254:7471
pass=0 fail=0 failed=()
t_all=$EPOCHREALTIME
for group in "$@"; do
    IFS=: read -r layout prog suites <<<"$group"
    x=${layout%+*} y=${layout#*+}
    IFS=, read -r -a list <<<"$suites"
    for s in "${list[@]}"; do
        t0=$EPOCHREALTIME
        log=$(mktemp)
        rc=0
        "$bin/zipper-run" --local -x "$x" -y "$y" --forwarder-a "$fa" --forwarder-b "$fb" \
            --timeout 300 --zipperd-log "$log.zipperd" -- "$bin/$prog" "$s" >"$log" 2>&1 || rc=$?
        dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
        if ((rc == 0)) && grep -q "^PASS $s " "$log"; then
            pass=$((pass + 1))
            echo "PASS $scheme $layout $prog $s (${dt} s)"
        else
            fail=$((fail + 1))
            failed+=("$layout/$s")
            echo "FAIL $scheme $layout $prog $s (${dt} s, zipper-run status $rc); output tail:"
            tail -n 15 "$log" | sed 's/^/    /'
            echo "    zipperd log tail:"
            tail -n 10 "$log.zipperd" 2>/dev/null | sed 's/^/    /'
        fi
        rm -f "$log" "$log.zipperd"
    done
done
dt=$(awk -v a="$t_all" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
echo "SUMMARY $scheme: $pass passed, $fail failed in ${dt} s${failed:+ (failed: ${failed[*]})}"
((fail == 0))
