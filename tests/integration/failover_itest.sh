#!/usr/bin/env bash
# Ranks stripe over K zipperd on loopback while one of them fails;
# the job must finish with every byte checked (mmpi_failover_itest), or, when
# every forwarder goes, end non-zero within 10 s with no process left.
# usage: failover_itest.sh BIN_DIR kill|stop|drain|all K X Y ROUNDS
# FAILOVER_PROGRAM / FAILOVER_ARGS run another program of BIN_DIR (default
# mmpi_failover_itest ROUNDS) that prints "# failover: ... begin" once its
# traffic runs and "PASS FAILOVER_PASS ..." at the end (a stream of
# accumulates, mmpi_rma_itest rma_stream SECONDS).
set -euo pipefail
[[ -z ${FAILOVER_DEBUG:-} ]] || set -x
bin=$1 fault=$2 k=$3 x=$4 y=$5 rounds=$6
prog=${FAILOVER_PROGRAM:-mmpi_failover_itest}
read -r -a prog_args <<<"${FAILOVER_ARGS:-$rounds}"
pass=${FAILOVER_PASS:-failover}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d)
trap 'kill -CONT $(cat "$dir"/pids 2>/dev/null) 2>/dev/null || true
      kill -TERM $(cat "$dir"/zipperd.*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$dir"' EXIT
# k ports that bind now, below the ephemeral range (loopback_ports.py).
port=$("$(dirname "$0")/loopback_ports.py" "$k")
# A short forwarder timeout so that a stopped zipperd is noticed quickly.
t0=$(date +%s.%N)
run_args=(--local --zippers "$k" --port "$port")
if [[ $fault == drain ]]; then
    # zipperd of our own, each with a control socket for `zipperctl drain`.
    fwd=()
    for i in $(seq 1 "$k"); do
        p=$((port + i - 1))
        "$bin/zipperd" --listen "A=127.0.0.1:$p" --control-socket "$dir/ctl.$i" \
            --pid-file "$dir/zipperd.$i.pid" --host-key "$dir/key.$i" >"$dir/zipperd.$i.log" 2>&1 &
        echo "zipperd running (pid $!, log $dir/zipperd.$i.log)" >>"$dir/started"
        fwd+=("127.0.0.1:$p")
    done
    for i in $(seq 1 "$k"); do
        for _ in $(seq 100); do [[ -s $dir/zipperd.$i.pid ]] && break; sleep 0.1; done
    done
    list=$(IFS=,; echo "${fwd[*]}")
    keys=$(for i in $(seq 1 "$k"); do cat "$dir/key.$i.pub"; done | paste -sd,)
    run_args=(--local --no-zipperd --forwarder-a "$list" --forwarder-b "$list"
              --env "MMPI_FORWARDER_KEYS=$keys")
fi
"$bin/zipper-run" "${run_args[@]}" -x "$x" -y "$y" --timeout 240 \
    --env MMPI_FORWARDER_TIMEOUT=2000 -- "$bin/$prog" "${prog_args[@]}" >"$dir/out" 2>&1 &
run=$!
touch "$dir/started"
# zipperd of bridge node 2 (or every one, for "all").
for _ in $(seq 200); do
    [[ $(cat "$dir/out" "$dir/started" | grep -c 'zipperd running (pid' || true) -ge $k ]] && break
    sleep 0.1
done
mapfile -t pids < <(cat "$dir/out" "$dir/started" | sed -n 's/.*zipperd running (pid \([0-9]*\),.*/\1/p')
[[ ${#pids[@]} -ge $k ]] || { cat "$dir/out"; echo "FAIL: zipperd did not start"; exit 1; }
# Traffic first: the fault hits messages in flight both ways.
for _ in $(seq 300); do
    grep -q "^# failover: .* begin" "$dir/out" 2>/dev/null && break
    sleep 0.1
done
sleep 1
case $fault in
    kill) kill -KILL "${pids[1]}" || { cat "$dir/out"; exit 1; } ;;
    stop) kill -STOP "${pids[1]}"; echo "${pids[1]}" >"$dir/pids" ;;
    all) t_all=$(date +%s.%N); kill -KILL "${pids[@]}" ;;
    drain) "$bin/zipperctl" --socket "$dir/ctl.2" drain ;;
esac
echo "fault '$fault' at $(echo "$(date +%s.%N) - $t0" | bc) s"
rc=0
wait "$run" || rc=$?
t_end=$(date +%s.%N)
cat "$dir/out" | grep -v '^  |' | grep -v 'not authenticated' || true
# On failure the zipperd logs zipper-run showed ("  |" lines, left out above)
# too: whether a forwarder saw the PINGs, who closed what, when.
fail() {
    grep '^  |' "$dir/out" | tail -n 400 || true
    echo "FAIL: $*"
    exit 1
}
if [[ $fault == all ]]; then
    took=$(echo "$t_end - $t_all" | bc)
    echo "job ended with status $rc, $took s after every zipperd was killed"
    [[ $rc -ne 0 ]] || fail "the job exited 0 with no forwarder left"
    (($(echo "$took < 10" | bc))) || fail "took $took s (limit 10 s)"
    grep -q "no forwarder left\|link to zipperd failed" "$dir/out" ||
        fail "no clear message"
    ! pgrep -f "$prog ${prog_args[*]}" >/dev/null || fail "ranks left running"
    echo "PASS failover_all"
    exit 0
fi
if [[ $fault == drain ]]; then
    # The drained zipperd: no job left on it, and it says draining.
    "$bin/zipperctl" --socket "$dir/ctl.2" status
    "$bin/zipperctl" --socket "$dir/ctl.2" --json status | grep -q '"state": *"draining"' ||
        fail "zipperd 2 does not say draining"
    grep -q "is draining for maintenance" "$dir/out" || fail "no rank moved off"
    kill -TERM $(cat "$dir"/zipperd.*.pid) 2>/dev/null || true
fi
[[ $rc -eq 0 ]] || fail "zipper-run exited $rc"
grep -q "^PASS $pass" "$dir/out" || fail "no PASS line"
grep -q "is out of use" "$dir/out" || fail "no rank noticed the failed forwarder"
echo "PASS failover_$fault"
