#!/usr/bin/env bash
# run_p2p.sh (installed as zipper-bench-p2p): point-to-point benchmarks on the
# emulated two-cluster setup, natively inside cluster A, natively inside
# cluster B, and from A to B through zipperd, in one go; writes a CSV with
# the ratios. See --help.
set -euo pipefail

PROG=${0##*/}
SELF_DIR=$(dirname "$(readlink -f "$0")")

# ------------------------------------------------------------------ defaults
BIN=$SELF_DIR
BENCHES=latency,bw,bibw
MODES=native_a,native_b,forwarded
MSG_SIZES=''
ITERATIONS=''
WARMUP=''
WINDOW=''
RATE_A=1gbit
RATE_B=4gbit
UNSHAPED=0
OUT=bench-p2p.csv
RAW_DIR=''
RUN_TIMEOUT=1800
TEARDOWN=0
ZIPPERD_LISTEN_A=10.201.0.254:7470
ZIPPERD_LISTEN_B=10.202.0.254:7470
ZIPPERD_START_TIMEOUT=30

usage() {
    cat <<EOF
Usage: $PROG [options]

Runs OSU-style point-to-point benchmarks three ways on the emulated clusters
of zipper-emulate and writes one CSV:
  native_a   osu_<bench>_native, 2 ranks on clusterA1 + clusterA2 (plain MPI)
  native_b   osu_<bench>_native, 2 ranks on clusterB1 + clusterB2 (plain MPI)
  forwarded  osu_<bench> (libmmpi), rank 0 in cluster A, rank 1 in cluster B,
             through a zipperd this script starts in netns zipper
             (zipper-run --emulated -x 1 -y 1 reuses it)

Steps: zipper-emulate up --nodes-a 2 --nodes-b 2 [--rate-a R --rate-b R];
the native runs; zipperd start, the forwarded runs, zipperd peak RSS
(VmHWM), SIGTERM to zipperd; CSV + summary. The emulation is left up unless
--teardown is given. Must run as root.

Options:
  --bin DIR             directory with osu_*[_native], zipperd, zipper-run,
                        zipper-emulate, zipper-netns-rsh
                        (default: this script's directory, $SELF_DIR)
  --bench LIST          comma-separated subset of latency,bw,bibw (default: all)
  --modes LIST          comma-separated subset of native_a,native_b,forwarded
                        (default: all)
  -m, --message-size [MIN:]MAX
                        passed to the benchmarks as -m (default: theirs, 1:4194304)
  -i, --iterations N    passed to the benchmarks as -i (default: theirs)
  -x, --warmup N        passed to the benchmarks as -x (default: theirs)
  -W, --window N        passed to bw and bibw as -W (default: theirs, 64)
  --rate-a RATE         tc rate of cluster A's links (default $RATE_A)
  --rate-b RATE         tc rate of cluster B's links (default $RATE_B)
  --unshaped            no rate limits at all
  --out FILE            CSV to write (default $OUT); the raw outputs go to the
                        directory FILE-without-.csv + .raw next to it
  --raw-dir DIR         put the raw outputs in DIR instead
  --timeout SEC         limit for each single benchmark run (default $RUN_TIMEOUT)
  --teardown            run 'zipper-emulate down' at the end
  -h, --help            show this help

CSV columns:
  benchmark,size_bytes,native_a,native_b,forwarded,fwd_over_native_a,
  fwd_over_native_b,fwd_over_sum_native
values are the OSU numbers (latency: us; bw, bibw: MB/s with MB = 1e6 B);
fwd_over_sum_native = forwarded / (native_a + native_b), filled for latency
only (the latency one would expect from two hops in series). Rows
'zipperd,peak_rss_kib' (VmHWM) and 'zipperd,rss_kib' (VmRSS after the last
run) carry their value in the 'forwarded' column.

Environment: ZIPPER_RSH_NO_PIN=1 also turns off the taskset of the local
mpirun (cluster A on cpu 0, cluster B on cpu 1, matching zipper-netns-rsh).

Exit status: 0 when every run succeeded, 1 when a run failed (the CSV is
still written with what was measured), 2 on a usage error.
EOF
}

die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}
usage_error() {
    printf '%s: %s (see --help)\n' "$PROG" "$*" >&2
    exit 2
}
info() { printf '%s: %s\n' "$PROG" "$*" >&2; }

# ------------------------------------------------------------------ options
need_val() { (($# >= 2)) || usage_error "option $1 needs a value"; }
while (($#)); do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --bin) need_val "$@"; BIN=$2; shift 2 ;;
        --bench) need_val "$@"; BENCHES=$2; shift 2 ;;
        --modes) need_val "$@"; MODES=$2; shift 2 ;;
        -m | --message-size) need_val "$@"; MSG_SIZES=$2; shift 2 ;;
        -i | --iterations) need_val "$@"; ITERATIONS=$2; shift 2 ;;
        -x | --warmup) need_val "$@"; WARMUP=$2; shift 2 ;;
        -W | --window) need_val "$@"; WINDOW=$2; shift 2 ;;
        --rate-a) need_val "$@"; RATE_A=$2; shift 2 ;;
        --rate-b) need_val "$@"; RATE_B=$2; shift 2 ;;
        --unshaped) UNSHAPED=1; shift ;;
        --out) need_val "$@"; OUT=$2; shift 2 ;;
        --raw-dir) need_val "$@"; RAW_DIR=$2; shift 2 ;;
        --timeout) need_val "$@"; RUN_TIMEOUT=$2; shift 2 ;;
        --teardown) TEARDOWN=1; shift ;;
        --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;; # --opt=value
        *) usage_error "unknown argument '$1'" ;;
    esac
done

check_list() { # list allowed... -> status 0 if list is a non-empty subset of allowed
    local list=$1 item a ok
    local -a items=()
    shift
    IFS=',' read -r -a items <<<"$list"
    ((${#items[@]})) || return 1
    for item in "${items[@]}"; do
        ok=0
        for a in "$@"; do [[ $item == "$a" ]] && ok=1; done
        ((ok)) || return 1
    done
}
check_list "$BENCHES" latency bw bibw ||
    usage_error "--bench wants a comma-separated subset of latency,bw,bibw, got '$BENCHES'"
check_list "$MODES" native_a native_b forwarded ||
    usage_error "--modes wants a comma-separated subset of native_a,native_b,forwarded, got '$MODES'"
IFS=',' read -r -a BENCH_LIST <<<"$BENCHES"
has_mode() { [[ ,$MODES, == *",$1,"* ]]; }

[[ -z $MSG_SIZES || $MSG_SIZES =~ ^[0-9]*:?[0-9]*$ ]] || usage_error "bad -m '$MSG_SIZES' (want [MIN:]MAX)"
[[ -z $ITERATIONS || $ITERATIONS =~ ^[1-9][0-9]*$ ]] || usage_error "bad --iterations '$ITERATIONS'"
[[ -z $WARMUP || $WARMUP =~ ^[0-9]+$ ]] || usage_error "bad --warmup '$WARMUP'"
[[ -z $WINDOW || $WINDOW =~ ^[1-9][0-9]*$ ]] || usage_error "bad --window '$WINDOW'"
[[ $RUN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || usage_error "bad --timeout '$RUN_TIMEOUT'"
[[ -n $OUT ]] || usage_error "--out needs a file name"
if [[ -z $RAW_DIR ]]; then
    RAW_DIR=$(dirname -- "$OUT")/$(basename -- "$OUT" .csv).raw
fi

# ------------------------------------------------------------------ preflight
# Everything is checked before anything runs: a missing piece must not show
# up only after half an hour of native runs.
problems=()
need_exe() { # path what
    [[ -f $1 && -x $1 ]] || problems+=("$2 not found or not executable: $1")
}
need_path() {
    command -v "$1" >/dev/null 2>&1 || problems+=("command '$1' not found in PATH")
}
BIN=$(readlink -f -- "$BIN" 2>/dev/null || printf '%s' "$BIN")
[[ -d $BIN ]] || die "--bin: no such directory: $BIN"
[[ $(id -u) -eq 0 ]] || problems+=("must run as root (network namespaces)")
for c in ip unshare timeout awk sort; do need_path "$c"; done
need_exe "$BIN/zipper-emulate" zipper-emulate
if has_mode native_a || has_mode native_b; then
    need_path mpirun
    need_exe "$BIN/zipper-netns-rsh" "zipper-netns-rsh (Open MPI's rsh agent for the emulated nodes)"
    for b in "${BENCH_LIST[@]}"; do need_exe "$BIN/osu_${b}_native" "native benchmark osu_${b}_native"; done
fi
if has_mode forwarded; then
    if [[ ! -e $BIN/zipperd ]]; then
        problems+=("zipperd not found: $BIN/zipperd -- the forwarded run needs it (build target zipperd, point --bin at the directory holding it, or leave the forwarded run out with --modes native_a,native_b)")
    else
        need_exe "$BIN/zipperd" zipperd
    fi
    need_exe "$BIN/zipper-run" "zipper-run (launcher of the forwarded run)"
    for b in "${BENCH_LIST[@]}"; do need_exe "$BIN/osu_$b" "libmmpi benchmark osu_$b"; done
fi
if ((${#problems[@]})); then
    printf '%s: error: cannot run:\n' "$PROG" >&2
    printf '  - %s\n' "${problems[@]}" >&2
    exit 1
fi

# Open MPI refuses root unless told; the emulation needs root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

mkdir -p -- "$RAW_DIR" "$(dirname -- "$OUT")"
RAW_DIR=$(readlink -f -- "$RAW_DIR")
CMDLOG=$RAW_DIR/commands.txt
: >"$CMDLOG"
FAILED=()

# ------------------------------------------------------------------ cleanup
ZIPPERD_PID=''
ZIPPERD_BGPID=''
RUN_PID=''
# shellcheck disable=SC2317 # called through the trap
cleanup() {
    local rc=$?
    if [[ -n $RUN_PID ]] && kill -0 "$RUN_PID" 2>/dev/null; then
        info "interrupted: stopping the running benchmark"
        kill -TERM "$RUN_PID" 2>/dev/null || true
        wait "$RUN_PID" 2>/dev/null || true
    fi
    if [[ -n $ZIPPERD_PID ]] && kill -0 "$ZIPPERD_PID" 2>/dev/null; then
        info "stopping zipperd (pid $ZIPPERD_PID)"
        kill -TERM "$ZIPPERD_PID" 2>/dev/null || true
        local i
        for ((i = 0; i < 50; i++)); do
            kill -0 "$ZIPPERD_PID" 2>/dev/null || break
            sleep 0.1
        done
    fi
    if ((TEARDOWN)); then
        info "tearing the emulation down"
        "$BIN/zipper-emulate" down || info "zipper-emulate down failed"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

logcmd() { printf '%q ' "$@" >>"$CMDLOG"; printf '\n' >>"$CMDLOG"; }

# ------------------------------------------------------------------ helpers
bench_args() { # bench -> the passthrough options, one per line
    [[ -z $MSG_SIZES ]] || printf '%s\n' -m "$MSG_SIZES"
    [[ -z $ITERATIONS ]] || printf '%s\n' -i "$ITERATIONS"
    [[ -z $WARMUP ]] || printf '%s\n' -x "$WARMUP"
    [[ -z $WINDOW || $1 == latency ]] || printf '%s\n' -W "$WINDOW"
}

# The OSU table: "size value" per row, from the first "# Size" header on.
# Only the last two fields are looked at, so launcher prefixes do not matter.
parse_osu() { # file
    awk '
        /# Size/ { h = 1; next }
        h && NF >= 2 && $(NF-1) ~ /^[0-9]+$/ && $NF ~ /^[0-9]+(\.[0-9]+)?$/ { print $(NF-1), $NF }
    ' "$1"
}

show_log() { # file: all of it if short, else its head and tail
    local n
    [[ -s $1 ]] || return 0
    n=$(wc -l <"$1")
    printf '  --- %s ---\n' "$1" >&2
    if ((n <= 30)); then
        sed 's/^/  | /' "$1" >&2
    else
        head -n 10 "$1" | sed 's/^/  | /' >&2
        printf '  | [... %d lines ...]\n' $((n - 25)) >&2
        tail -n 15 "$1" | sed 's/^/  | /' >&2
    fi
}

# Runs "$@" under the timeout, stdout to $RAW_DIR/$tag.out, stderr to .err,
# then extracts the table into .tsv. Records failures, never exits.
run_one() { # tag cmd...
    local tag=$1 rc=0 rows
    shift
    local out=$RAW_DIR/$tag.out err=$RAW_DIR/$tag.err tsv=$RAW_DIR/$tag.tsv
    rm -f -- "$out" "$err" "$tsv"
    logcmd "$@"
    info "running $tag"
    local t0=$SECONDS
    # In the background and waited for, so that an interrupt of this script
    # reaches the run too (timeout puts its child in its own process group).
    timeout --kill-after=15 "$RUN_TIMEOUT" "$@" >"$out" 2>"$err" </dev/null &
    RUN_PID=$!
    wait "$RUN_PID" || rc=$?
    RUN_PID=''
    parse_osu "$out" >"$tsv"
    rows=$(wc -l <"$tsv")
    if ((rc != 0)); then
        if ((rc == 124 || rc == 137)); then
            info "FAILED $tag: timed out after ${RUN_TIMEOUT}s ($rows rows measured before)"
        else
            info "FAILED $tag: exit status $rc ($rows rows measured before)"
        fi
        show_log "$out"
        show_log "$err"
        FAILED+=("$tag")
    elif ((rows == 0)); then
        info "FAILED $tag: no OSU table in its output"
        show_log "$out"
        show_log "$err"
        FAILED+=("$tag")
    else
        info "done $tag: $rows sizes in $((SECONDS - t0)) s"
    fi
}

cpu_of() { # cluster letter -> cpu for the local mpirun (as zipper-netns-rsh pins node 1)
    local n
    n=$(nproc --all 2>/dev/null || echo 1)
    ((n >= 1)) || n=1
    case $1 in A) echo 0 ;; *) echo $((1 % n)) ;; esac
}

run_native() { # bench cluster(A|B)
    local b=$1 c=$2 n1=cluster${2}1 n2=cluster${2}2
    local -a pin=() args=()
    mapfile -t args < <(bench_args "$b")
    if [[ ${ZIPPER_RSH_NO_PIN:-0} != 1 ]] && command -v taskset >/dev/null 2>&1; then
        pin=(taskset -c "$(cpu_of "$c")")
    fi
    # shellcheck disable=SC2016 # $1 and $@ are sh's, not ours
    run_one "$b.native_${c,,}" \
        ip netns exec "$n1" unshare --uts \
        sh -c 'hostname "$1" && shift && exec "$@"' sh "$n1" \
        "${pin[@]}" mpirun --oversubscribe --bind-to none -np 2 --host "$n1,$n2" \
        --mca plm_rsh_agent "$BIN/zipper-netns-rsh" \
        --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
        "$BIN/osu_${b}_native" "${args[@]}"
}

start_zipperd() {
    local pidfile=$RAW_DIR/zipperd.pid log=$RAW_DIR/zipperd.log i
    rm -f -- "$pidfile"
    local -a cmd=(ip netns exec zipper "$BIN/zipperd"
        --listen "A=$ZIPPERD_LISTEN_A" --listen "B=$ZIPPERD_LISTEN_B" --pid-file "$pidfile")
    logcmd "${cmd[@]}"
    info "starting zipperd in netns zipper (log $log)"
    "${cmd[@]}" >"$log" 2>&1 </dev/null &
    ZIPPERD_BGPID=$!
    for ((i = 0; i < ZIPPERD_START_TIMEOUT * 10; i++)); do
        if [[ -s $pidfile ]]; then
            ZIPPERD_PID=$(tr -dc '0-9' <"$pidfile")
            if [[ -n $ZIPPERD_PID ]] && kill -0 "$ZIPPERD_PID" 2>/dev/null; then
                info "zipperd up (pid $ZIPPERD_PID)"
                return 0
            fi
        fi
        if ! kill -0 "$ZIPPERD_BGPID" 2>/dev/null; then
            local rc=0
            wait "$ZIPPERD_BGPID" || rc=$?
            ZIPPERD_BGPID=''
            info "zipperd exited with status $rc before writing its pid file"
            show_log "$log"
            return 1
        fi
        sleep 0.1
    done
    info "zipperd wrote no pid file ($pidfile) within ${ZIPPERD_START_TIMEOUT}s"
    show_log "$log"
    kill -TERM "$ZIPPERD_BGPID" 2>/dev/null || true
    return 1
}

ZIPPERD_HWM=''
ZIPPERD_RSS=''
stop_zipperd() {
    local st=/proc/$ZIPPERD_PID/status i rc=0
    if [[ -r $st ]]; then
        ZIPPERD_HWM=$(awk '/^VmHWM:/ { print $2 }' "$st")
        ZIPPERD_RSS=$(awk '/^VmRSS:/ { print $2 }' "$st")
        info "zipperd peak RSS (VmHWM) ${ZIPPERD_HWM} KiB, RSS now ${ZIPPERD_RSS} KiB"
    else
        info "zipperd (pid $ZIPPERD_PID) is gone: no peak RSS"
        FAILED+=(zipperd-died)
        show_log "$RAW_DIR/zipperd.log"
    fi
    kill -TERM "$ZIPPERD_PID" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$ZIPPERD_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$ZIPPERD_PID" 2>/dev/null; then
        info "zipperd did not exit within 10s of SIGTERM; sending SIGKILL"
        kill -KILL "$ZIPPERD_PID" 2>/dev/null || true
        FAILED+=(zipperd-shutdown)
    elif [[ -n $ZIPPERD_BGPID && $ZIPPERD_BGPID == "$ZIPPERD_PID" ]]; then
        wait "$ZIPPERD_BGPID" || rc=$?
        if ((rc != 0)); then
            info "zipperd exited with status $rc on SIGTERM (expected 0)"
            FAILED+=(zipperd-shutdown)
        fi
    fi
    ZIPPERD_PID=''
}

run_forwarded() { # bench
    local b=$1
    local -a args=()
    mapfile -t args < <(bench_args "$b")
    run_one "$b.forwarded" "$BIN/zipper-run" --emulated --no-zipperd -x 1 -y 1 -- "$BIN/osu_$b" "${args[@]}"
}

# ------------------------------------------------------------------ run
emu=("$BIN/zipper-emulate" up --nodes-a 2 --nodes-b 2)
((UNSHAPED)) || emu+=(--rate-a "$RATE_A" --rate-b "$RATE_B")
logcmd "${emu[@]}"
info "bringing the emulation up: ${emu[*]:1}"
"${emu[@]}" || die "zipper-emulate up failed"

for b in "${BENCH_LIST[@]}"; do
    has_mode native_a && run_native "$b" A
    has_mode native_b && run_native "$b" B
done

if has_mode forwarded; then
    if start_zipperd; then
        for b in "${BENCH_LIST[@]}"; do run_forwarded "$b"; done
        stop_zipperd
    else
        FAILED+=(zipperd-start)
        info "skipping the forwarded runs: zipperd did not start"
    fi
fi

# ------------------------------------------------------------------ CSV
{
    echo benchmark,size_bytes,native_a,native_b,forwarded,fwd_over_native_a,fwd_over_native_b,fwd_over_sum_native
    for b in "${BENCH_LIST[@]}"; do
        for m in native_a native_b forwarded; do
            f=$RAW_DIR/$b.$m.tsv
            if has_mode "$m" && [[ -f $f ]]; then sed "s/^/$m /" "$f"; fi
        done | awk -v bench="$b" '
            function ratio(n, d) { return (n != "" && d != "" && d + 0 > 0) ? sprintf("%.4f", n / d) : "" }
            { seen[$2] = 1; v[$1, $2] = $3 }
            END {
                for (s in seen) {
                    a = v["native_a", s]; nb = v["native_b", s]; f = v["forwarded", s]
                    sum = (bench == "latency" && a != "" && nb != "") ? a + nb : ""
                    printf "%s,%s,%s,%s,%s,%s,%s,%s\n", bench, s, a, nb, f,
                        ratio(f, a), ratio(f, nb), ratio(f, sum)
                }
            }' | sort -t, -k2,2n
    done
    if [[ -n $ZIPPERD_HWM ]]; then
        echo "zipperd,peak_rss_kib,,,$ZIPPERD_HWM,,,"
        echo "zipperd,rss_kib,,,$ZIPPERD_RSS,,,"
    fi
} >"$OUT"
info "wrote $OUT (raw outputs in $RAW_DIR)"

# ------------------------------------------------------------------ summary
# bw and bibw at 4 MiB (or the largest size with data), latency at 8 B (or
# the smallest size with data).
awk -F, -v benches=",$BENCHES," '
    NR == 1 { next }
    { a[$1, $2] = $3; nb[$1, $2] = $4; f[$1, $2] = $5; sizes[$1] = sizes[$1] " " $2 }
    function pick(bench, want, largest,    n, i, s, best, k) {
        if ((bench, want) in f && f[bench, want] != "") return want
        n = split(sizes[bench], s, " "); best = ""
        for (i = 1; i <= n; i++) {
            k = s[i]
            if (f[bench, k] == "") continue
            if (best == "" || (largest ? k + 0 > best + 0 : k + 0 < best + 0)) best = k
        }
        return best
    }
    function z(v) { return v == "" ? "n/a" : v }
    function r(n, d) { return (n != "" && d != "" && d + 0 > 0) ? sprintf("%.3f", n / d) : "n/a" }
    END {
        print "summary:"
        s = pick("bw", 4194304, 1)
        if (index(benches, ",bw,") == 0) ;
        else if (s != "")
            printf "  bw    @ %8s B: forwarded %s MB/s / native A %s MB/s = %s\n", s, f["bw", s], z(a["bw", s]), r(f["bw", s], a["bw", s])
        else print "  bw: no forwarded data"
        t = pick("bibw", 4194304, 1)
        if (index(benches, ",bibw,") == 0 || index(benches, ",bw,") == 0) ;
        else if (t != "" && s != "")
            printf "  bibw  @ %8s B: forwarded bibw %s MB/s / forwarded bw @ %s B %s MB/s = %s\n", t, f["bibw", t], s, f["bw", s], r(f["bibw", t], f["bw", s])
        else print "  bibw/bw: no forwarded data"
        l = pick("latency", 8, 0)
        if (index(benches, ",latency,") == 0) ;
        else if (l != "") {
            sum = (a["latency", l] != "" && nb["latency", l] != "") ? a["latency", l] + nb["latency", l] : ""
            printf "  lat   @ %8s B: forwarded %s us / (native A %s + native B %s us) = %s\n", l, f["latency", l], z(a["latency", l]), z(nb["latency", l]), r(f["latency", l], sum)
        } else print "  latency: no forwarded data"
        if (("zipperd", "peak_rss_kib") in f) printf "  zipperd peak RSS: %s KiB\n", f["zipperd", "peak_rss_kib"]
    }' "$OUT"

if ((${#FAILED[@]})); then
    info "some runs failed: ${FAILED[*]} (see $RAW_DIR)"
    exit 1
fi
exit 0
