#!/usr/bin/env bash
# run_coll.sh (installed as zipper-bench-coll): OSU-style collective latency
# benchmarks on the emulated two-cluster setup: native MPI inside one cluster
# of x+y ranks, and libmmpi across the two clusters through zipperd for every
# algorithm and several n, in one go; writes a CSV with the ratios. See --help.
set -euo pipefail

PROG=${0##*/}
SELF_DIR=$(dirname "$(readlink -f "$0")")

# ------------------------------------------------------------------ defaults
BIN=$SELF_DIR
ALL_BENCHES=barrier,bcast,reduce,allreduce,alltoall,alltoallv
BENCHES=$ALL_BENCHES
MODES=native,mmpi
NP_X=4
NP_Y=4
PPN=1
ALGOS=''            # empty: auto + every algorithm of each collective
NLIST=1,2,min
MSG_SIZES=4:1048576
ITERATIONS=100
ITERATIONS_LARGE=20
WARMUP=10
WARMUP_LARGE=2
RATE_A=1gbit
RATE_B=4gbit
UNSHAPED=0
OUT=bench-coll.csv
RAW_DIR=''
TUNING_IN=''
TUNING_OUT=''
RUN_TIMEOUT=900
TEARDOWN=0
YIELD=1
ZIPPERD_LISTEN_A=10.201.0.254:7470
ZIPPERD_LISTEN_B=10.202.0.254:7470
ZIPPERD_START_TIMEOUT=30

# Algorithms per collective (docs/collectives.md) and those that take n.
declare -A COLL_ALGOS=(
    [barrier]=two_level
    [bcast]='farfirst vandegeijn'
    [reduce]=leaders
    [allreduce]='two_tier rabenseifner'
    [alltoall]='direct aggregated'
    [alltoallv]='direct aggregated'
)
TAKES_N=' vandegeijn rabenseifner aggregated '

usage() {
    cat <<EOF
Usage: $PROG [options]

Runs OSU-style collective latency benchmarks (osu_barrier, osu_bcast,
osu_reduce, osu_allreduce, osu_alltoall, osu_alltoallv) on the emulated
clusters of zipper-emulate and writes one CSV:
  native  osu_<bench>_native, plain Open MPI, x+y ranks inside cluster A
          (nodes clusterA1..clusterA<ceil((x+y)/ppn)>, links shaped to
          --rate-a): the single-cluster baseline of the same size
  mmpi    osu_<bench> (libmmpi), x ranks in cluster A (--rate-a) and y in
          cluster B (--rate-b) through a zipperd this script starts in netns
          zipper (zipper-run --emulated --no-zipperd -x X -y Y reuses it);
          once with automatic selection ('auto') and once per algorithm and,
          for the algorithms that take n, per n (MMPIX_Coll_set through the
          benchmarks' --algorithm/--inter-senders options)

Algorithms (docs/collectives.md; '(n)' = run for every n of --inter-senders):
  barrier: two_level             bcast: farfirst, vandegeijn (n)
  reduce: leaders                allreduce: two_tier, rabenseifner (n)
  alltoall, alltoallv: direct, aggregated (n)

Steps: zipper-emulate up --nodes-a max(ceil((x+y)/ppn), ceil(x/ppn))
--nodes-b ceil(y/ppn) [--rate-a R --rate-b R] (rebuilds a different
topology; refuses while others use it); the native runs; zipperd start, the
MMPI runs, zipperd peak RSS (VmHWM), SIGTERM to zipperd; CSV + summary. Ranks
are placed one per node by default (--ppn), so every message between two
ranks crosses the shaped links. The emulation is left up unless --teardown is
given. Must run as root.

Options:
  --bin DIR             directory with osu_*[_native], zipperd, zipper-run,
                        zipper-emulate, zipper-netns-rsh
                        (default: this script's directory, $SELF_DIR)
  --bench LIST          comma-separated subset of
                        $ALL_BENCHES (default: all)
  --modes LIST          comma-separated subset of native,mmpi (default: both)
  -x, --np-low X        MMPI ranks in cluster A (default $NP_X)
  -y, --np-high Y       MMPI ranks in cluster B (default $NP_Y)
  --layout X+Y          both at once (e.g. 4+4, 2+6)
  --ppn P               ranks per emulated node (default $PPN)
  --algorithms LIST     comma-separated names to run, 'auto' included
                        (default: auto and all); names that do not belong to
                        a collective are skipped for it
  --inter-senders LIST  n values for the algorithms that take n: integers
                        and 'min' (= min(x,y)); values above min(x,y) are
                        dropped (default $NLIST)
  -m, --message-size [MIN:]MAX
                        message sizes in bytes (default $MSG_SIZES; the OSU
                        default 1:1048576 takes long on two cores). With all
                        defaults (4+4, every algorithm, n = 1,2,4: 6 native
                        + 24 MMPI runs) expect roughly 20 minutes on a
                        2-core machine, most of it alltoall(v) at 512 KiB
                        and 1 MiB
  -i, --iterations N    timed iterations per size up to 8 KiB (default $ITERATIONS)
  --iterations-large N  timed iterations above 8 KiB (default $ITERATIONS_LARGE)
  --warmup N            warm-up iterations up to 8 KiB (default $WARMUP)
  --warmup-large N      warm-up iterations above 8 KiB (default $WARMUP_LARGE)
  --rate-a RATE         tc rate of cluster A's links (default $RATE_A)
  --rate-b RATE         tc rate of cluster B's links (default $RATE_B)
  --unshaped            no rate limits at all
  --tuning-file FILE    MMPI_TUNING_FILE for the MMPI runs (it decides what
                        'auto' picks; the explicit algorithms override it).
                        Without it the MMPI runs get no MMPI_* variables
                        from this environment: 'auto' = the built-in rules
  --tuning-out FILE     also write a tuning file (TOML, docs/collectives.md)
                        choosing per size range the fastest measured
                        algorithm and n of bcast, allreduce, alltoall
                        (alltoallv: the best over all sizes), for this layout
  --out FILE            CSV to write (default $OUT); the raw outputs go to the
                        directory FILE-without-.csv + .raw next to it
  --raw-dir DIR         put the raw outputs in DIR instead
  --timeout SEC         limit for each single benchmark run (default $RUN_TIMEOUT)
  --no-yield            do not pass '--mca mpi_yield_when_idle 1' to mpirun
                        (both modes get it by default: with one rank per
                        node Open MPI does not see that the emulated nodes
                        share two cores, and polling ranks then cost
                        milliseconds per message)
  --teardown            run 'zipper-emulate down' at the end
  -h, --help            show this help

CSV columns:
  bench,mode,layout,algorithm,n,size,avg_us,min_us,max_us,iterations,ratio_vs_native
mode native|mmpi; layout X+Y; algorithm 'native' for the native rows, 'auto'
for automatic selection; n empty where the default was used; size in bytes
(0 for barrier); avg/min/max as OSU computes them (each rank's mean latency,
averaged / min / max over the ranks), in us; ratio_vs_native = mmpi avg_us /
native avg_us at the same bench and size. The summary on stdout shows avg_us
and the ratio per size and configuration, the fastest MMPI configuration and
how far 'auto' is from it.

Environment: ZIPPER_RSH_NO_PIN=1 turns off the CPU pinning of the emulated
nodes (zipper-netns-rsh; the head of the native mpirun is pinned like
zipper-run pins it).

Exit status: 0 when every run succeeded, 1 when a run failed (the CSV is
still written with what was measured; a benchmark whose results fail
verification aborts and counts as failed), 2 on a usage error, 77 when this
machine cannot run the emulation (not root, no network namespaces).
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
        -x | --np-low) need_val "$@"; NP_X=$2; shift 2 ;;
        -y | --np-high) need_val "$@"; NP_Y=$2; shift 2 ;;
        -x?* | -y?*) set -- "${1:0:2}" "${1:2}" "${@:2}" ;; # -x4
        --layout) need_val "$@"
            [[ $2 =~ ^([0-9]+)\+([0-9]+)$ ]] || usage_error "bad --layout '$2' (want X+Y, e.g. 4+4)"
            NP_X=${BASH_REMATCH[1]} NP_Y=${BASH_REMATCH[2]}
            shift 2 ;;
        --ppn) need_val "$@"; PPN=$2; shift 2 ;;
        --algorithms) need_val "$@"; ALGOS=$2; shift 2 ;;
        --inter-senders) need_val "$@"; NLIST=$2; shift 2 ;;
        -m | --message-size) need_val "$@"; MSG_SIZES=$2; shift 2 ;;
        -i | --iterations) need_val "$@"; ITERATIONS=$2; shift 2 ;;
        --iterations-large) need_val "$@"; ITERATIONS_LARGE=$2; shift 2 ;;
        --warmup) need_val "$@"; WARMUP=$2; shift 2 ;;
        --warmup-large) need_val "$@"; WARMUP_LARGE=$2; shift 2 ;;
        --rate-a) need_val "$@"; RATE_A=$2; shift 2 ;;
        --rate-b) need_val "$@"; RATE_B=$2; shift 2 ;;
        --unshaped) UNSHAPED=1; shift ;;
        --tuning-file) need_val "$@"; TUNING_IN=$2; shift 2 ;;
        --tuning-out) need_val "$@"; TUNING_OUT=$2; shift 2 ;;
        --out) need_val "$@"; OUT=$2; shift 2 ;;
        --raw-dir) need_val "$@"; RAW_DIR=$2; shift 2 ;;
        --timeout) need_val "$@"; RUN_TIMEOUT=$2; shift 2 ;;
        --teardown) TEARDOWN=1; shift ;;
        --no-yield) YIELD=0; shift ;;
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
IFS=',' read -r -a ALL_BENCH_LIST <<<"$ALL_BENCHES"
check_list "$BENCHES" "${ALL_BENCH_LIST[@]}" ||
    usage_error "--bench wants a comma-separated subset of $ALL_BENCHES, got '$BENCHES'"
check_list "$MODES" native mmpi ||
    usage_error "--modes wants a comma-separated subset of native,mmpi, got '$MODES'"
IFS=',' read -r -a BENCH_LIST <<<"$BENCHES"
has_mode() { [[ ,$MODES, == *",$1,"* ]]; }

is_posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
is_posint "$NP_X" || usage_error "bad -x '$NP_X' (want a positive integer)"
is_posint "$NP_Y" || usage_error "bad -y '$NP_Y' (want a positive integer)"
is_posint "$PPN" || usage_error "bad --ppn '$PPN'"
NMAX=$((NP_X < NP_Y ? NP_X : NP_Y))
NTOT=$((NP_X + NP_Y))
LAYOUT=$NP_X+$NP_Y

ALL_ALGOS=" auto ${COLL_ALGOS[*]} "
if [[ -n $ALGOS ]]; then
    IFS=',' read -r -a _a <<<"$ALGOS"
    ((${#_a[@]})) || usage_error "--algorithms needs at least one name"
    for a in "${_a[@]}"; do
        [[ $ALL_ALGOS == *" $a "* ]] ||
            usage_error "--algorithms: unknown algorithm '$a' (known: $(tr ' ' '\n' <<<"$ALL_ALGOS" | awk 'NF && !seen[$0]++' | paste -sd, -))"
    done
fi
want_algo() { [[ -z $ALGOS || ,$ALGOS, == *",$1,"* ]]; }

N_VALUES=()
IFS=',' read -r -a _n <<<"$NLIST"
((${#_n[@]})) || usage_error "--inter-senders needs at least one value"
for v in "${_n[@]}"; do
    [[ $v == min ]] && v=$NMAX
    is_posint "$v" || usage_error "--inter-senders: bad value '$v' (want integers >= 1 or 'min')"
    if ((v > NMAX)); then
        info "--inter-senders: dropping n=$v (above min(x,y) = $NMAX for layout $LAYOUT)"
        continue
    fi
    [[ " ${N_VALUES[*]} " == *" $v "* ]] || N_VALUES+=("$v")
done
((${#N_VALUES[@]})) || usage_error "--inter-senders: no value left in 1..$NMAX"
mapfile -t N_VALUES < <(printf '%s\n' "${N_VALUES[@]}" | sort -n)

[[ $MSG_SIZES =~ ^[0-9]*:?[0-9]*$ ]] || usage_error "bad -m '$MSG_SIZES' (want [MIN:]MAX)"
is_posint "$ITERATIONS" || usage_error "bad --iterations '$ITERATIONS'"
is_posint "$ITERATIONS_LARGE" || usage_error "bad --iterations-large '$ITERATIONS_LARGE'"
[[ $WARMUP =~ ^[0-9]+$ ]] || usage_error "bad --warmup '$WARMUP'"
[[ $WARMUP_LARGE =~ ^[0-9]+$ ]] || usage_error "bad --warmup-large '$WARMUP_LARGE'"
is_posint "$RUN_TIMEOUT" || usage_error "bad --timeout '$RUN_TIMEOUT'"
[[ -n $OUT ]] || usage_error "--out needs a file name"
if [[ -z $RAW_DIR ]]; then
    RAW_DIR=$(dirname -- "$OUT")/$(basename -- "$OUT" .csv).raw
fi

# The MMPI configurations of one bench, one "algorithm n" per line (n empty
# for the default).
configs_of() { # bench
    local b=$1 a n
    want_algo auto && echo "auto "
    for a in ${COLL_ALGOS[$b]}; do
        want_algo "$a" || continue
        if [[ $TAKES_N == *" $a "* ]]; then
            for n in "${N_VALUES[@]}"; do echo "$a $n"; done
        else
            echo "$a "
        fi
    done
}

# ------------------------------------------------------------------ preflight
# Everything is checked before anything runs: a missing piece must not show
# up only after the native runs.
if [[ $(id -u) -ne 0 ]]; then
    printf '%s: skipped: must run as root (the emulation uses network namespaces)\n' "$PROG" >&2
    exit 77
fi
problems=()
need_exe() { # path what
    [[ -f $1 && -x $1 ]] || problems+=("$2 not found or not executable: $1")
}
need_path() {
    command -v "$1" >/dev/null 2>&1 || problems+=("command '$1' not found in PATH")
}
BIN=$(readlink -f -- "$BIN" 2>/dev/null || printf '%s' "$BIN")
[[ -d $BIN ]] || die "--bin: no such directory: $BIN"
for c in ip unshare timeout awk sort; do need_path "$c"; done
need_exe "$BIN/zipper-emulate" zipper-emulate
if [[ -x $BIN/zipper-emulate ]]; then
    if ! why=$("$BIN/zipper-emulate" check 2>&1); then
        printf '%s: skipped: this machine cannot run the emulation: %s\n' "$PROG" "$why" >&2
        exit 77
    fi
fi
if has_mode native; then
    need_path mpirun
    need_exe "$BIN/zipper-netns-rsh" "zipper-netns-rsh (Open MPI's rsh agent for the emulated nodes)"
    for b in "${BENCH_LIST[@]}"; do need_exe "$BIN/osu_${b}_native" "native benchmark osu_${b}_native"; done
fi
if has_mode mmpi; then
    if [[ ! -e $BIN/zipperd ]]; then
        problems+=("zipperd not found: $BIN/zipperd -- the MMPI runs need it (build target zipperd, point --bin at the directory holding it, or leave the MMPI runs out with --modes native)")
    else
        need_exe "$BIN/zipperd" zipperd
    fi
    need_exe "$BIN/zipper-run" "zipper-run (launcher of the MMPI runs)"
    for b in "${BENCH_LIST[@]}"; do need_exe "$BIN/osu_$b" "libmmpi benchmark osu_$b (build target osu_$b)"; done
    if [[ -n $TUNING_IN ]]; then
        [[ -r $TUNING_IN ]] || problems+=("--tuning-file: cannot read '$TUNING_IN'")
        TUNING_IN=$(readlink -f -- "$TUNING_IN" 2>/dev/null || printf '%s' "$TUNING_IN")
    fi
fi
[[ -z $TUNING_OUT ]] || has_mode mmpi || problems+=("--tuning-out needs the MMPI runs (--modes ...,mmpi)")
if ((${#problems[@]})); then
    printf '%s: error: cannot run:\n' "$PROG" >&2
    printf '  - %s\n' "${problems[@]}" >&2
    exit 1
fi

# Open MPI refuses root unless told; the emulation needs root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# zipper-run hands every MMPI_* variable of ours to the ranks: start clean so
# that 'auto' means the built-in rules (or --tuning-file).
stray=$(compgen -e | grep '^MMPI_' || true)
if [[ -n $stray ]]; then
    info "ignoring MMPI_* variables of this environment: ${stray//$'\n'/ }"
    # shellcheck disable=SC2086 # one name per word
    unset $stray
fi
[[ -z $TUNING_IN ]] || export MMPI_TUNING_FILE=$TUNING_IN

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
bench_args() { # bench -> the benchmark options, one per line
    printf '%s\n' -f -i "$ITERATIONS" --warmup "$WARMUP"
    [[ $1 == barrier ]] && return 0
    printf '%s\n' -m "$MSG_SIZES" --iterations-large "$ITERATIONS_LARGE" --warmup-large "$WARMUP_LARGE"
}

# The OSU table (-f format) as "size avg min max iterations" lines, from the
# first header on. Barrier rows have no size: 0.
parse_osu() { # bench file
    awk -v bench="$1" '
        /^# (Size|Avg Latency)/ { h = 1; next }
        !h || /^#/ { next }
        {
            for (i = 1; i <= NF; i++) if ($i !~ /^[0-9]+(\.[0-9]+)?$/) next
            if (bench == "barrier" && NF == 4) print 0, $1, $2, $3, $4
            else if (bench != "barrier" && NF == 5) print $1, $2, $3, $4, $5
        }
    ' "$2"
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
run_one() { # bench tag cmd...
    local b=$1 tag=$2 rc=0 rows
    shift 2
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
    parse_osu "$b" "$out" >"$tsv"
    rows=$(wc -l <"$tsv")
    if grep -q 'VERIFICATION FAILED' "$out" "$err" 2>/dev/null; then
        info "FAILED $tag: WRONG RESULTS -- the benchmark's verification failed ($rows sizes measured before)"
        grep -h 'VERIFICATION FAILED' "$out" "$err" | awk '!seen[$0]++' | head -n 3 | sed 's/^/  | /' >&2
        FAILED+=("$tag(verification)")
    elif ((rc != 0)); then
        if ((rc == 124 || rc == 137)); then
            info "FAILED $tag: timed out after ${RUN_TIMEOUT}s ($rows sizes measured before)"
        else
            info "FAILED $tag: exit status $rc ($rows sizes measured before)"
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
        return 0
    fi
    return 1
}

cpu_of_head() { # as zipper-netns-rsh / zipper-run pin clusterA1
    [[ ${ZIPPER_RSH_NO_PIN:-0} != 1 ]] && command -v taskset >/dev/null 2>&1 && echo 0
    return 0
}

# Extra mpirun options of both modes.
MPIRUN_EXTRA=()
((YIELD == 0)) || MPIRUN_EXTRA+=(--mca mpi_yield_when_idle 1)

# Native: one mpirun of x+y ranks over the nodes of cluster A, with the
# options zipper-run uses for an emulated cluster (so both modes differ only
# in the library and the placement across clusters).
NATIVE_NODES=$(((NTOT + PPN - 1) / PPN))
MMPI_NODES_A=$(((NP_X + PPN - 1) / PPN))
MMPI_NODES_B=$(((NP_Y + PPN - 1) / PPN))
run_native() { # bench
    local b=$1 hf=$RAW_DIR/hostfile-native i cpu
    local -a pin=() args=()
    : >"$hf"
    for ((i = 1; i <= NATIVE_NODES; i++)); do echo "clusterA$i slots=$PPN" >>"$hf"; done
    mapfile -t args < <(bench_args "$b")
    cpu=$(cpu_of_head)
    [[ -z $cpu ]] || pin=(taskset -c "$cpu")
    # shellcheck disable=SC2016 # $0 and $@ are sh's, not ours
    run_one "$b" "$b.native" \
        ip netns exec clusterA1 unshare --uts "${pin[@]}" \
        sh -c 'hostname "$0" && exec "$@"' clusterA1 \
        mpirun -np "$NTOT" --oversubscribe --hostfile "$hf" \
        --mca plm_rsh_agent "$BIN/zipper-netns-rsh" --mca plm_rsh_no_tree_spawn 1 \
        --mca btl tcp,vader,self --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
        --bind-to none --map-by node "${MPIRUN_EXTRA[@]}" \
        "$BIN/osu_${b}_native" "${args[@]}"
}

start_zipperd() {
    local pidfile=$RAW_DIR/zipperd.pid log=$RAW_DIR/zipperd.log i
    rm -f -- "$pidfile"
    local -a cmd=(ip netns exec zipper "$BIN/zipperd"
        --listen "A=$ZIPPERD_LISTEN_A" --listen "B=$ZIPPERD_LISTEN_B" --pid-file "$pidfile")
    logcmd "${cmd[@]}"
    info "starting zipperd in netns zipper (log $log)"
    "${cmd[@]}" >>"$log" 2>&1 </dev/null &
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
            info "zipperd exited with status $rc before writing its pid file (another zipperd on $ZIPPERD_LISTEN_A?)"
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
ZIPPERD_RESTARTS=0
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

# A zipperd that died during a run is restarted (and the death recorded), so
# that one crash does not fail every later run.
ensure_zipperd() {
    [[ -n $ZIPPERD_PID ]] && kill -0 "$ZIPPERD_PID" 2>/dev/null && return 0
    info "zipperd (pid $ZIPPERD_PID) died; see $RAW_DIR/zipperd.log; restarting it"
    FAILED+=(zipperd-died)
    ZIPPERD_RESTARTS=$((ZIPPERD_RESTARTS + 1))
    [[ -z $ZIPPERD_BGPID ]] || wait "$ZIPPERD_BGPID" 2>/dev/null || true
    ZIPPERD_PID=''
    start_zipperd
}

run_mmpi() { # bench algorithm n
    local b=$1 a=$2 n=$3 tag
    local -a args=() sel=()
    mapfile -t args < <(bench_args "$b")
    tag=$b.mmpi.$a
    [[ $a == auto ]] || sel+=(--algorithm "$a")
    if [[ -n $n ]]; then
        sel+=(--inter-senders "$n")
        tag+=.n$n
    fi
    local -a extra=()
    ((${#MPIRUN_EXTRA[@]} == 0)) || extra=(--mpirun-args "${MPIRUN_EXTRA[*]}")
    run_one "$b" "$tag" "$BIN/zipper-run" --emulated --no-zipperd -x "$NP_X" -y "$NP_Y" \
        --nodes-a "$MMPI_NODES_A" --nodes-b "$MMPI_NODES_B" "${extra[@]}" \
        -- "$BIN/osu_$b" "${args[@]}" "${sel[@]}"
}

# ------------------------------------------------------------------ run
EMU_A=1 EMU_B=1
if has_mode native; then EMU_A=$NATIVE_NODES; fi
if has_mode mmpi; then
    ((MMPI_NODES_A > EMU_A)) && EMU_A=$MMPI_NODES_A
    EMU_B=$MMPI_NODES_B
fi
# An emulation that is up with at least these nodes and the same rates is
# reused as it is ('up' would rebuild any other topology, disturbing whoever
# else uses it); otherwise 'up' builds exactly what is needed.
emulation_fits() {
    local st ha hb ra rb want_a=$RATE_A want_b=$RATE_B
    ((UNSHAPED)) && want_a=unshaped want_b=unshaped
    st=$("$BIN/zipper-emulate" status 2>/dev/null) || return 1
    [[ $st != *warning:* ]] || return 1
    ha=$(sed -n 's/^  cluster A: \([0-9]*\) node(s), rate \(.*\)$/\1/p' <<<"$st")
    ra=$(sed -n 's/^  cluster A: \([0-9]*\) node(s), rate \(.*\)$/\2/p' <<<"$st")
    hb=$(sed -n 's/^  cluster B: \([0-9]*\) node(s), rate \(.*\)$/\1/p' <<<"$st")
    rb=$(sed -n 's/^  cluster B: \([0-9]*\) node(s), rate \(.*\)$/\2/p' <<<"$st")
    [[ -n $ha && -n $hb ]] && ((ha >= EMU_A && hb >= EMU_B)) &&
        [[ $ra == "$want_a" && $rb == "$want_b" ]]
}
if emulation_fits; then
    info "reusing the emulation that is up (>= $EMU_A node(s) in A, >= $EMU_B in B, same rates)"
    logcmd "$BIN/zipper-emulate" status
else
    emu=("$BIN/zipper-emulate" up --nodes-a "$EMU_A" --nodes-b "$EMU_B")
    ((UNSHAPED)) || emu+=(--rate-a "$RATE_A" --rate-b "$RATE_B")
    logcmd "${emu[@]}"
    info "bringing the emulation up: ${emu[*]:1}"
    "${emu[@]}" || die "zipper-emulate up failed"
fi
"$BIN/zipper-emulate" status >"$RAW_DIR/emulation.txt" 2>&1 || true
info "layout $LAYOUT ($NTOT ranks), $PPN rank(s) per node; native on clusterA1..A$NATIVE_NODES$( ((UNSHAPED)) && echo ' (unshaped)' || echo " at $RATE_A"); MMPI on A1..A$MMPI_NODES_A + B1..B$MMPI_NODES_B"

if has_mode native; then
    for b in "${BENCH_LIST[@]}"; do run_native "$b" || true; done
fi

if has_mode mmpi; then
    if start_zipperd; then
        for b in "${BENCH_LIST[@]}"; do
            while read -r a n; do
                ensure_zipperd || { FAILED+=(zipperd-start); break 2; }
                run_mmpi "$b" "$a" "${n:-}" || true
            done < <(configs_of "$b")
        done
        [[ -z $ZIPPERD_PID ]] || stop_zipperd
    else
        FAILED+=(zipperd-start)
        info "skipping the MMPI runs: zipperd did not start"
    fi
fi

# ------------------------------------------------------------------ CSV
# All measurements as "bench mode algorithm n size avg min max iters" lines
# (n '-' when empty), native first.
{
    for b in "${BENCH_LIST[@]}"; do
        f=$RAW_DIR/$b.native.tsv
        if [[ -f $f ]] && has_mode native; then sed "s/^/$b native native - /" "$f"; fi
    done
    if has_mode mmpi; then
        for b in "${BENCH_LIST[@]}"; do
            while read -r a n; do
                tag=$b.mmpi.$a
                [[ -z ${n:-} ]] || tag+=.n$n
                f=$RAW_DIR/$tag.tsv
                if [[ -f $f ]]; then sed "s/^/$b mmpi $a ${n:--} /" "$f"; fi
            done < <(configs_of "$b")
        done
    fi
    true
} >"$RAW_DIR/all.tsv"

awk -v layout="$LAYOUT" '
    { row[NR] = $0; if ($2 == "native") nat[$1, $5] = $6 }
    END {
        print "bench,mode,layout,algorithm,n,size,avg_us,min_us,max_us,iterations,ratio_vs_native"
        for (i = 1; i <= NR; i++) {
            split(row[i], f, " ")
            n = f[4] == "-" ? "" : f[4]
            r = ""
            if (f[2] == "mmpi" && ((f[1], f[5]) in nat) && nat[f[1], f[5]] + 0 > 0)
                r = sprintf("%.4f", f[6] / nat[f[1], f[5]])
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", f[1], f[2], layout, f[3], n, f[5], f[6], f[7], f[8], f[9], r
        }
    }' "$RAW_DIR/all.tsv" >"$OUT"
{
    echo "layout $LAYOUT ppn $PPN yield_when_idle $YIELD rate_a $( ((UNSHAPED)) && echo unshaped || echo "$RATE_A") rate_b $( ((UNSHAPED)) && echo unshaped || echo "$RATE_B")"
    [[ -z $ZIPPERD_HWM ]] || echo "zipperd peak_rss_kib $ZIPPERD_HWM rss_kib $ZIPPERD_RSS restarts $ZIPPERD_RESTARTS"
} >"$RAW_DIR/info.txt"
info "wrote $OUT (raw outputs in $RAW_DIR)"

# ------------------------------------------------------------------ tuning file
# Per bench with a choice (bcast, allreduce, alltoall): the fastest config per
# measured size, merged into size ranges; a range ends at its last measured
# size. alltoallv (its rules see no size): the config with the lowest
# geometric mean of avg_us over all sizes. reduce and barrier have one
# algorithm each: nothing to tune.
if [[ -n $TUNING_OUT ]]; then
    awk -v x="$NP_X" -v y="$NP_Y" -v takes="$TAKES_N" -v when="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        -v rates="$( ((UNSHAPED)) && echo unshaped || echo "A=$RATE_A B=$RATE_B")" '
        $2 == "mmpi" && $3 != "auto" {
            b = $1; cfg = $3 " " $4; s = $5 + 0; v = $6 + 0
            if (!((b, s) in best) || v < best[b, s]) { best[b, s] = v; bcfg[b, s] = cfg }
            if (!((b, s) in seen)) { seen[b, s] = 1; sizes[b] = sizes[b] " " s }
            lsum[b, cfg] += log(v > 0 ? v : 1e-3); lcnt[b, cfg]++
            if (!((b, cfg) in cseen)) { cseen[b, cfg] = 1; cfgs[b] = cfgs[b] "|" cfg }
        }
        function emit_choice(cfg,    p) {
            split(cfg, p, " ")
            printf "algorithm = \"%s\"\n", p[1]
            if (p[2] != "-" && index(takes, " " p[1] " ")) printf "inter_senders = %d\n", p[2]
        }
        END {
            printf "# zipper tuning file written by zipper-bench-coll on %s\n", when
            printf "# layout %d+%d, links %s; the fastest measured algorithm per size range.\n", x, y, rates
            printf "# Rules carry np_low/np_high: other layouts fall back to the built-in rules.\n"
            nb = split("bcast allreduce alltoall", B, " ")
            for (k = 1; k <= nb; k++) {
                b = B[k]
                if (sizes[b] == "") continue
                n = split(sizes[b], S, " ")
                # sort sizes numerically (insertion sort, few entries)
                for (i = 2; i <= n; i++) { t = S[i] + 0; for (j = i - 1; j >= 1 && S[j] + 0 > t; j--) S[j + 1] = S[j]; S[j + 1] = t }
                lo = ""; prevmax = -1
                for (i = 1; i <= n; i++) {
                    c = bcfg[b, S[i]]
                    if (i < n && bcfg[b, S[i + 1]] == c) continue
                    printf "\n[[%s.rule]]\n", b
                    if (prevmax >= 0) printf "min_bytes = %d\n", prevmax + 1
                    if (i < n) printf "max_bytes = %d\n", S[i]
                    printf "np_low = %d\nnp_high = %d\n", x, y
                    emit_choice(c)
                    prevmax = S[i]
                }
            }
            b = "alltoallv"
            if (cfgs[b] != "") {
                m = split(substr(cfgs[b], 2), C, "|"); bc = ""
                for (i = 1; i <= m; i++) {
                    g = lsum[b, C[i]] / lcnt[b, C[i]]
                    if (bc == "" || g < bg) { bc = C[i]; bg = g }
                }
                printf "\n# alltoallv: best geometric mean over all sizes (its rules see no size)\n"
                printf "[[%s.rule]]\nnp_low = %d\nnp_high = %d\n", b, x, y
                emit_choice(bc)
            }
        }' "$RAW_DIR/all.tsv" >"$TUNING_OUT"
    info "wrote tuning file $TUNING_OUT"
fi

# ------------------------------------------------------------------ summary
# Per bench: one row per size, native avg_us, then per MMPI config
# "avg_us xratio", the fastest MMPI config and auto / fastest.
awk -v layout="$LAYOUT" -v benches="$BENCHES" '
    {
        b = $1; s = $5 + 0
        if ($2 == "native") { key = "native" } else { key = $3 ($4 == "-" ? "" : "/" $4) }
        v[b, key, s] = $6
        if (!((b, s) in sseen)) { sseen[b, s] = 1; sizes[b] = sizes[b] " " s }
        if (key != "native" && !((b, key) in kseen)) { kseen[b, key] = 1; keys[b] = keys[b] " " key }
    }
    function fmt_us(x) { return x == "" ? "n/a" : sprintf("%.1f", x) }
    END {
        nb = split(benches, B, ",")
        printf "\nsummary (layout %s; avg latency in us; xR = MMPI / native at the same size):\n", layout
        for (k = 1; k <= nb; k++) {
            b = B[k]
            if (sizes[b] == "") { printf "\n%s: no data\n", b; continue }
            n = split(sizes[b], S, " ")
            for (i = 2; i <= n; i++) { t = S[i] + 0; for (j = i - 1; j >= 1 && S[j] + 0 > t; j--) S[j + 1] = S[j]; S[j + 1] = t }
            m = split(keys[b], K, " ")
            w = 10
            for (j = 1; j <= m; j++) if (length(K[j]) + 2 > w) w = length(K[j]) + 2
            cw = w < 18 ? 18 : w
            printf "\n%s\n%-9s %10s", b, "size", "native"
            for (j = 1; j <= m; j++) printf " %*s", cw, K[j]
            printf "   %-16s %8s\n", "fastest MMPI", "auto/best"
            for (i = 1; i <= n; i++) {
                s = S[i]; nat = v[b, "native", s]
                printf "%-9s %10s", (b == "barrier" ? "-" : s), fmt_us(nat)
                bestk = ""; bestv = 0
                for (j = 1; j <= m; j++) {
                    x = v[b, K[j], s]
                    if (x == "") { printf " %*s", cw, "n/a"; continue }
                    cell = sprintf("%.1f", x)
                    if (nat != "" && nat + 0 > 0) cell = cell sprintf(" x%.2f", x / nat)
                    printf " %*s", cw, cell
                    if (K[j] != "auto" && (bestk == "" || x + 0 < bestv)) { bestk = K[j]; bestv = x + 0 }
                }
                a = v[b, "auto", s]
                printf "   %-16s %8s\n", (bestk == "" ? "-" : bestk),
                    (a != "" && bestk != "" && bestv > 0) ? sprintf("%.2f", a / bestv) : "-"
            }
        }
    }' "$RAW_DIR/all.tsv"
if [[ -n $ZIPPERD_HWM ]]; then
    printf '\nzipperd peak RSS (VmHWM): %s KiB\n' "$ZIPPERD_HWM"
fi

if ((${#FAILED[@]})); then
    info "some runs failed: ${FAILED[*]} (see $RAW_DIR)"
    exit 1
fi
exit 0
