#!/usr/bin/env bash
# Runs integration suites over the verbs link inside the rxe guest
# (rxe-guest.sh), one zipperd per run started by zipper-run with verbs
# listeners on both subnets:
#   A ranks (10.1.0.1, rxeA) -> verbs:10.1.0.254:7471 (rxe_zA) zipperd
#   B ranks (10.2.0.1, rxeB) -> verbs:10.2.0.254:7471 (rxe_zB) zipperd
#
#   guest-suites.sh BIN_DIR GROUP...
#     GROUP = [VAR=VALUE@]X+Y:PROGRAM:SUITE[,SUITE...][:SCHEME_A/SCHEME_B]
#     (SUITE "a+b": the program runs its tests a and b in one job)
#             (e.g. verbs/tcp: side A over verbs, side B over TCP, both through
#             one zipperd; VAR=VALUE@ sets one variable for the ranks, and
#             for ZIPPER_VERBS_KEY the same setting for zipperd as its flag
#             --verbs-key, e.g. ZIPPER_VERBS_SRQ_THRESHOLD=0@ puts every link
#             on an SRQ)
#     GROUP = checks   error paths: listen on an address of no RDMA device,
#             connect where nobody listens, zipperd killed mid-run (each must
#             fail fast and clearly, never hang); zipperd listening on
#             DEVICE:PORT addresses (verbs:rxe_zA:1) serves a run, and a
#             device without that port is refused by name
#     GROUP = registrations   1+1 mmpi_itest stream256 (256 MiB A -> B in
#             64 MiB messages); zipperd's stop log must show >= 256 MiB
#             relayed and at most (pool regions x 2 devices + 2 per link x 2
#             links + 4) memory registrations: pool buffers are registered
#             once per device, never per relayed chunk
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

# expect_fail NAME PATTERNS MAX_SECONDS COMMAND...: COMMAND must fail within
# MAX_SECONDS with every ';'-separated PATTERN in its output.
expect_fail() {
    local name=$1 pat=$2 max=$3 rc=0 t0=$EPOCHREALTIME out
    shift 3
    out=$(timeout 60 "$@" 2>&1) || rc=$?
    local dt
    dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
    local all=1 p
    IFS=';' read -r -a pats <<<"$pat"
    for p in "${pats[@]}"; do grep -q -- "$p" <<<"$out" || all=0; done
    if ((rc != 0 && all)) && awk -v d="$dt" -v m="$max" 'BEGIN{exit !(d <= m)}'; then
        pass=$((pass + 1))
        echo "PASS check $name (${dt} s): $(grep -m1 -- "${pats[0]}" <<<"$out" | cut -c1-220)"
    else
        fail=$((fail + 1))
        failed+=("check/$name")
        echo "FAIL check $name (status $rc, ${dt} s, wanted '$pat' within ${max} s); output tail:"
        tail -n 8 <<<"$out" | sed 's/^/    /'
    fi
}

run_checks() {
    expect_fail listen_no_device "no RDMA device has address 10.9.9.9" 10 \
        "$bin/zipperd" --listen A=verbs:10.9.9.9:7471
    # Nobody listens on port 7999: RDMA CM rejects; the client retries until
    # MMPI_CONNECT_TIMEOUT, then names the address and the reason.
    expect_fail connect_nobody_listens "cannot connect to zipperd at verbs:10.1.0.254:7999" 30 \
        env MMPI_FORWARDER=verbs:10.1.0.254:7999 MMPI_JOB_SECRET="$(printf %064d 0)" MMPI_GROUP=low MMPI_NP_LOW=1 \
        MMPI_NP_HIGH=1 MMPI_CONNECT_TIMEOUT=3 mpirun -np 1 "$bin/mmpi_itest" pingpong
    # zipperd dies (SIGKILL) in the middle of a run: both ranks must report
    # the lost link instead of hanging (the grace period exceeds the check's
    # limit, so a rank that hangs fails the check). A DISCONNECTED event does
    # not always reach both; the keepalive probe catches the other.
    "$bin/zipperd" --listen A=verbs:10.1.0.254:7473 --listen B=verbs:10.2.0.254:7473 \
        --pid-file /tmp/zipperd-kill.pid --host-key /tmp/zipperd-kill.key >/tmp/zipperd-kill.log 2>&1 &
    local zpid=$! i
    disown "$zpid" # killed on purpose: no job report
    for ((i = 0; i < 100; i++)); do [[ -s /tmp/zipperd-kill.pid ]] && break; sleep 0.1; done
    # Kill once both ranks are connected and traffic flows (a rank still in
    # MMPI_Init would just retry its connect until MMPI_CONNECT_TIMEOUT).
    (for ((i = 0; i < 600; i++)); do
        grep -q "all 2 ranks connected" /tmp/zipperd-kill.log && break
        sleep 0.1
    done
    sleep 2
    kill -KILL "$zpid") &
    expect_fail zipperd_killed "rank 0\]: link to zipperd failed;rank 1\]: link to zipperd failed" 40 \
        "$bin/zipper-run" --local --no-zipperd -x 1 -y 1 --forwarder-keys "$(cat /tmp/zipperd-kill.key.pub)" \
        --forwarder-a verbs:10.1.0.254:7473 \
        --forwarder-b verbs:10.2.0.254:7473 --grace 50 -- "$bin/mmpi_itest" many
    expect_fail listen_no_such_port "cannot listen on verbs:rxe_zA:9: RDMA device rxe_zA has no port 9" 10 \
        "$bin/zipperd" --listen A=verbs:rxe_zA:9
    expect_fail listen_no_such_device "cannot listen on verbs:mlx9_9:1:7471: RDMA device .mlx9_9. not found" 10 \
        "$bin/zipperd" --listen A=verbs:mlx9_9:1:7471
    # The verbs settings are rows of zipperd's table: a bad value stops it
    # naming the flag.
    expect_fail verbs_flag_bad "--verbs-recv-buffers: expected an integer from 4 to 4096, got '2'" 10 \
        "$bin/zipperd" --listen A=verbs:10.1.0.254:7471 --verbs-recv-buffers 2
    # A hello libmmpi would never send: refused during the RDMA CM handshake,
    # before any QP resources, with the reason in the reject's private data.
    # zipperd reads no ZIPPER_VERBS_* variable: this one, out of range, would
    # stop a libmmpi rank at MMPI_Init, but this zipperd listens and serves.
    ZIPPER_VERBS_RECV_BUFFERS=2 "$bin/zipperd" --listen A=verbs:10.1.0.254:7476 \
        --pid-file /tmp/zipperd-probe.pid >/tmp/zipperd-probe.log 2>&1 &
    local ppid=$!
    for ((i = 0; i < 100; i++)); do [[ -s /tmp/zipperd-probe.pid ]] && break; sleep 0.1; done
    expect_fail hello_refused "refused the connection: hello: rank 4 is not in site 1 (world ranks 2..3)" 5 \
        "$bin/verbs_connect_probe" verbs:10.1.0.254:7476 7 4 2 2 3000
    # An outsider's injection over verbs: a valid hello in the private data,
    # then a proof made without the job secret. The CHALLENGE/AUTH frames
    # after the link is up refuse it as on TCP.
    expect_fail auth_forged_refused "auth refused: wrong proof of the job secret" 10 \
        "$bin/verbs_connect_probe" verbs:10.1.0.254:7476 7 0 1 1 3000 forge-auth
    kill "$ppid"
    wait "$ppid"
    if grep -q "refused a connection from verbs:10.1.0.1:[0-9]*: hello: rank 4 is not in site 1" /tmp/zipperd-probe.log; then
        pass=$((pass + 1))
        echo "PASS check hello_refused_logged: $(grep -m1 "refused a connection" /tmp/zipperd-probe.log | cut -c1-200)"
    else
        fail=$((fail + 1))
        failed+=("check/hello_refused_logged")
        echo "FAIL check hello_refused_logged; zipperd log tail:"
        tail -n 5 /tmp/zipperd-probe.log | sed 's/^/    /'
    fi
    # DEVICE:PORT listeners: A on the default RDMA CM port, B on an explicit one.
    local t0=$EPOCHREALTIME log=/tmp/devport.log rc=0
    "$bin/zipper-run" --local -x 1 -y 1 --zipperd-listen A=verbs:rxe_zA:1 \
        --zipperd-listen B=verbs:rxe_zB:1:7475 --forwarder-a verbs:10.1.0.254:7471 \
        --forwarder-b verbs:10.2.0.254:7475 --zipperd-log /tmp/devport.zipperd --timeout 120 \
        -- "$bin/mmpi_itest" pingpong >"$log" 2>&1 || rc=$?
    local dt
    dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
    if ((rc == 0)) && grep -q "^PASS pingpong " "$log" &&
        grep -q "verbs:10.1.0.254:7471 (device rxe_zA, port 1; from verbs:rxe_zA:1)" /tmp/devport.zipperd &&
        grep -q "verbs:10.2.0.254:7475 (device rxe_zB, port 1; from verbs:rxe_zB:1:7475)" /tmp/devport.zipperd; then
        pass=$((pass + 1))
        echo "PASS check listen_device_port (${dt} s): $(grep -m1 "from verbs:rxe_zA:1" /tmp/devport.zipperd | cut -c1-200)"
    else
        fail=$((fail + 1))
        failed+=("check/listen_device_port")
        echo "FAIL check listen_device_port (status $rc, ${dt} s); output and zipperd log tails:"
        tail -n 8 "$log" /tmp/devport.zipperd 2>&1 | sed 's/^/    /'
    fi
}

# Registrations after relaying >= 256 MiB: bounded by the pool
# regions per device plus the links' own buffers, independent of the data.
run_registrations() {
    local t0=$EPOCHREALTIME log=/tmp/regs.log zlog=/tmp/regs.zipperd rc=0
    "$bin/zipper-run" --local -x 1 -y 1 --forwarder-a "$fa" --forwarder-b "$fb" \
        --zipperd-log "$zlog" --timeout 300 -- "$bin/mmpi_itest" stream256 >"$log" 2>&1 || rc=$?
    local dt stop regions bytes frames regs bound
    dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
    stop=$(grep -m1 "stopped:" "$zlog")
    regions=$(grep -m1 "payload pools" "$zlog" | grep -o " x " | wc -l)
    frames=$(sed -n 's/.* \([0-9]*\) frames \/ [0-9]* payload bytes relayed.*/\1/p' <<<"$stop")
    bytes=$(sed -n 's/.* \([0-9]*\) payload bytes relayed.*/\1/p' <<<"$stop")
    regs=$(sed -n 's/.* \([0-9]*\) memory registrations.*/\1/p' <<<"$stop")
    bound=$((regions * 2 + 2 * 2 + 4))
    if ((rc == 0)) && grep -q "^PASS stream256 " "$log" && [[ -n $regs && -n $bytes ]] &&
        ((bytes >= 268435456 && regs <= bound)); then
        pass=$((pass + 1))
        echo "PASS registrations (${dt} s): $bytes payload bytes in $frames frames relayed," \
            "$regs memory registrations (bound $bound: $regions pool regions x 2 devices + 2 per link x 2 links + 4)"
    else
        fail=$((fail + 1))
        failed+=("registrations")
        echo "FAIL registrations (status $rc, ${dt} s; relayed '${bytes:-?}' bytes, '${regs:-?}'" \
            "registrations, bound $bound); output and zipperd log tails:"
        tail -n 8 "$log" "$zlog" 2>&1 | sed 's/^/    /'
    fi
}

for group in "$@"; do
    if [[ $group == checks ]]; then
        run_checks
        continue
    fi
    if [[ $group == registrations ]]; then
        run_registrations
        continue
    fi
    env_set=() zipperd_set=()
    if [[ $group == *@* ]]; then
        env_set=("${group%%@*}")
        group=${group#*@}
        # zipperd reads no ZIPPER_VERBS_* variable: the same value as its flag.
        if [[ ${env_set[0]} == ZIPPER_VERBS_*=* ]]; then
            var=${env_set[0]%%=*} flag=${var#ZIPPER_VERBS_}
            flag=${flag,,}
            zipperd_set=("--zipperd-arg=--verbs-${flag//_/-}=${env_set[0]#*=}")
        fi
    fi
    IFS=: read -r layout prog suites schemes <<<"$group"
    tagged=${env_set[0]:+ ${env_set[0]}}
    x=${layout%+*} y=${layout#*+}
    ga=$fa gb=$fb
    if [[ -n $schemes ]]; then
        ga=${schemes%/*}:10.1.0.254:7471 gb=${schemes#*/}:10.2.0.254:7472
    fi
    IFS=, read -r -a list <<<"$suites"
    for s in "${list[@]}"; do
        t0=$EPOCHREALTIME
        log=$(mktemp)
        rc=0
        extra=()
        # peerdeath kills a rank on purpose: B fails, A must still report PASS.
        [[ $s != peerdeath ]] || extra=(--grace 30)
        # "ring+many": the program's tests in one job (one start-up under TCG
        # for many tests); each must print its PASS line.
        env "${env_set[@]}" "$bin/zipper-run" --local -x "$x" -y "$y" --forwarder-a "$ga" --forwarder-b "$gb" "${extra[@]}" "${zipperd_set[@]}" \
            --timeout 300 --zipperd-log "$log.zipperd" -- "$bin/$prog" "${s//+/,}" >"$log" 2>&1 || rc=$?
        dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
        [[ $s != peerdeath ]] || rc=0
        passed=1
        IFS=+ read -r -a names <<<"$s"
        for n in "${names[@]}"; do grep -q "^PASS $n " "$log" || passed=0; done
        if ((rc == 0 && passed)); then
            pass=$((pass + 1))
            echo "PASS ${ga%%:*}/${gb%%:*} $layout $prog $s (${dt} s)$tagged"
        else
            fail=$((fail + 1))
            failed+=("$layout/$s$tagged")
            echo "FAIL ${ga%%:*}/${gb%%:*} $layout $prog $s (${dt} s, zipper-run status $rc)$tagged; output tail:"
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
