#!/usr/bin/env bash
# run_p2p.sh (installed as zipper-bench-p2p): point-to-point benchmarks
# natively inside cluster A, natively inside cluster B, and from A to B
# through zipperd, in one go: on the emulated two-cluster setup (default), on
# this host (--local) or on real clusters (--hostfile-a/-b), over the TCP or
# the verbs link (--link), optionally beside perftest as the native-verbs
# reference (--perftest). Writes a CSV with the ratios. See --help.
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
LINK=tcp
LOCAL=0
HOSTFILE_A=''
HOSTFILE_B=''
FORWARDER_A=''
FORWARDER_B=''
LOCAL_DEFAULT_ADDR=127.0.0.1:7470
MPIRUN_ARGS=()
PERFTEST=''
PERFTEST_GID=''
PERFTEST_PORT=18515
DRY_RUN=0
EMULATED_ONLY=() # emulated-only options given (a usage error elsewhere)

# The benchmarks' own defaults (bench/osu_p2p.h), for perftest's sizes and
# iteration counts.
OSU_MIN_SIZE=1
OSU_MAX_SIZE=4194304
OSU_LARGE=8192
OSU_WINDOW=64

usage() {
    cat <<EOF
Usage: $PROG [options]

Runs OSU-style point-to-point benchmarks three ways and writes one CSV:
  native_a   osu_<bench>_native, 2 ranks inside cluster A (plain MPI)
  native_b   osu_<bench>_native, 2 ranks inside cluster B (plain MPI)
  forwarded  osu_<bench> (libmmpi), rank 0 in cluster A, rank 1 in cluster B,
             through zipperd: two hops, A -> zipperd -> B
and, with --perftest, perftest between two RDMA devices of this host (one
hop) as the native-verbs reference.

Where it runs (one of three setups):
  (default)  the emulated clusters of zipper-emulate (network namespaces; must
             run as root). Steps: zipper-emulate up --nodes-a 2 --nodes-b 2
             [--rate-a R --rate-b R]; the native runs (clusterA1 + clusterA2,
             clusterB1 + clusterB2); zipperd started in netns zipper on
             10.201.0.254:7470 and 10.202.0.254:7470, the forwarded runs
             (zipper-run --emulated -x 1 -y 1 reuses it), zipperd peak RSS
             (VmHWM), SIGTERM to zipperd; CSV + summary. The emulation is left
             up unless --teardown is given.
  --local    everything on this host: no namespaces, no root needed (e.g. in
             the soft-RoCE guest of tests/verbs/rxe-guest.sh). native_a and
             native_b are the same run, 'mpirun -np 2' on this host (shared
             memory), done twice. This script starts zipperd itself with
             --listen A=<forwarder-a> --listen B=<forwarder-b> (one listener
             when both are the same) and reads its VmHWM as above; the
             forwarded runs are 'zipper-run --local -x 1 -y 1 --forwarder-a
             ADDR --forwarder-b ADDR'. The forwarders default to
             $LOCAL_DEFAULT_ADDR (one listener). In the soft-RoCE guest:
               --local --link verbs --forwarder-a 10.1.0.254:7471
               --forwarder-b 10.2.0.254:7471
  --hostfile-a FILE --hostfile-b FILE --forwarder-a ADDR --forwarder-b ADDR
             real clusters; no root needed. zipperd must already be serving
             at both addresses (e.g. a systemd service on the bridge node):
             this script does not start it, and leaves the zipperd RSS rows
             out of the CSV (it cannot see that process). native_a is
             'mpirun --hostfile FILE_A -np 2 --map-by node' (the ranks on the
             first two hosts of the file; a one-host file measures shared
             memory; --mpirun-args with a mapping option replaces --map-by
             node), native_b likewise with FILE_B; forwarded is 'zipper-run
             -x 1 -y 1 --hostfile-a FILE_A --hostfile-b FILE_B --forwarder-a
             ADDR --forwarder-b ADDR --no-zipperd' (rank 0 on the first host
             of FILE_A, rank 1 on the first host of FILE_B).
  ADDR is [tcp:|verbs:]HOST:PORT, as zipper-run takes it; without a scheme,
  the one of --link.

Link:
  --link tcp|verbs      scheme of the forwarder addresses (default $LINK):
                        zipperd --listen A=verbs:IP:PORT, zipper-run
                        --forwarder-a verbs:IP:PORT (docs/verbs.md). verbs
                        needs an RDMA device holding each address; without
                        one, zipperd or libmmpi fails with an error naming
                        what is missing, never falls back to TCP. Where this
                        script starts zipperd on a verbs address it does so
                        before the native runs, so that this failure comes
                        first and in seconds (zipperd then idles during the
                        native runs). The emulated namespaces have no RDMA
                        device (soft-RoCE does not work in network
                        namespaces): there --link verbs only shows that error.

Native-verbs reference (perftest):
  --perftest SERVER_DEV,CLIENT_DEV,SERVER_IP
                        for each message size of the sweep (-m; size 0 is
                        skipped) run perftest between two RDMA devices of
                        THIS host: latency: ib_send_lat -s SIZE; bw:
                        ib_write_bw -s SIZE; bibw: ib_write_bw -b -s SIZE.
                        The server runs in the background with -d SERVER_DEV,
                        the client with -d CLIENT_DEV SERVER_IP; both with -F
                        and -p $PERFTEST_PORT, without -R (no RDMA CM). Only local
                        devices are supported (both ends on this host; nothing
                        is started on other nodes), and they must reach each
                        other (two ports on one fabric or subnet; a bridge
                        node's A and B ports do not). Iterations (-n): latency
                        -i, bw and bibw -i x window (as many messages as the
                        OSU run); without -i the OSU defaults (latency 10000,
                        1000 above 8 KiB; bw/bibw 100 x window, 20 x window
                        above 8 KiB); at least 5 (perftest's minimum). Each
                        run has the --timeout limit.
                        perftest measures ONE hop (CLIENT_DEV <-> SERVER_DEV);
                        the forwarded run crosses TWO links plus zipperd
                        (A -> zipperd -> B), so fwd_over_perftest compares a
                        relay with a single link, not like with like. In the
                        soft-RoCE guest: --perftest rxe_zA,rxeA,10.1.0.254
                        --perftest-gid 1 (subnet A only, rxeA -> rxe_zA).
  --perftest-gid N      perftest's -x N, the GID index (default: none, i.e.
                        perftest's own; soft-RoCE needs 1, the IPv4 RoCEv2 GID)

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
  --mpirun-args "ARGS"  extra mpirun arguments (split on whitespace) for the
                        native runs and, as zipper-run --mpirun-args, for the
                        forwarded ones (repeatable)
  --rate-a RATE         tc rate of cluster A's links (default $RATE_A; emulated only)
  --rate-b RATE         tc rate of cluster B's links (default $RATE_B; emulated only)
  --unshaped            no rate limits at all (emulated only)
  --out FILE            CSV to write (default $OUT); the raw outputs go to the
                        directory FILE-without-.csv + .raw next to it
  --raw-dir DIR         put the raw outputs in DIR instead
  --timeout SEC         limit for each single benchmark or perftest run
                        (default $RUN_TIMEOUT)
  --teardown            run 'zipper-emulate down' at the end (emulated only)
  --dry-run             check everything as for a run, then print the
                        commands instead of running them
  -h, --help            show this help

CSV columns:
  benchmark,size_bytes,native_a,native_b,forwarded,fwd_over_native_a,
  fwd_over_native_b,fwd_over_sum_native,perftest,fwd_over_perftest
values are the OSU numbers (latency: us; bw, bibw: MB/s with MB = 1e6 B);
fwd_over_sum_native = forwarded / (native_a + native_b), filled for latency
only (the latency one would expect from two hops in series). perftest (empty
without --perftest): latency: ib_send_lat's t_avg in us (half a round trip,
like osu_latency); bw, bibw: ib_write_bw's BW average, which perftest reports
in MB/s with MB = 2^20 B, converted here to the OSU's MB = 1e6 B
(x 1.048576); for bibw the sum of both directions, like osu_bibw.
fwd_over_perftest = forwarded / perftest (one hop against two, see above).
Rows 'zipperd,peak_rss_kib' (VmHWM) and 'zipperd,rss_kib' (VmRSS after the
last run) carry their value in the 'forwarded' column; they are left out
with --hostfile-a/-b. The raw directory holds every output, commands.txt and
setup.txt (setup, link, addresses, perftest devices and what they measure).

Environment: ZIPPER_RSH_NO_PIN=1 also turns off the taskset of the local
mpirun in emulated mode (cluster A on cpu 0, cluster B on cpu 1, matching
zipper-netns-rsh). ZIPPER_VERBS_* reach a zipperd this script starts and,
with --local, the ranks (docs/verbs.md).

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
        --rate-a) need_val "$@"; RATE_A=$2; EMULATED_ONLY+=("$1"); shift 2 ;;
        --rate-b) need_val "$@"; RATE_B=$2; EMULATED_ONLY+=("$1"); shift 2 ;;
        --unshaped) UNSHAPED=1; EMULATED_ONLY+=("$1"); shift ;;
        --out) need_val "$@"; OUT=$2; shift 2 ;;
        --raw-dir) need_val "$@"; RAW_DIR=$2; shift 2 ;;
        --timeout) need_val "$@"; RUN_TIMEOUT=$2; shift 2 ;;
        --teardown) TEARDOWN=1; EMULATED_ONLY+=("$1"); shift ;;
        --link) need_val "$@"; LINK=$2; shift 2 ;;
        --local) LOCAL=1; shift ;;
        --hostfile-a) need_val "$@"; HOSTFILE_A=$2; shift 2 ;;
        --hostfile-b) need_val "$@"; HOSTFILE_B=$2; shift 2 ;;
        --forwarder-a) need_val "$@"; FORWARDER_A=$2; shift 2 ;;
        --forwarder-b) need_val "$@"; FORWARDER_B=$2; shift 2 ;;
        --mpirun-args)
            need_val "$@"
            read -r -a words <<<"$2"
            MPIRUN_ARGS+=("${words[@]}")
            shift 2
            ;;
        --perftest) need_val "$@"; PERFTEST=$2; shift 2 ;;
        --perftest-gid) need_val "$@"; PERFTEST_GID=$2; shift 2 ;;
        --dry-run) DRY_RUN=1; shift ;;
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
has_bench() { [[ ,$BENCHES, == *",$1,"* ]]; }

[[ -z $MSG_SIZES || $MSG_SIZES =~ ^[0-9]*:?[0-9]*$ ]] || usage_error "bad -m '$MSG_SIZES' (want [MIN:]MAX)"
[[ -z $ITERATIONS || $ITERATIONS =~ ^[1-9][0-9]*$ ]] || usage_error "bad --iterations '$ITERATIONS'"
[[ -z $WARMUP || $WARMUP =~ ^[0-9]+$ ]] || usage_error "bad --warmup '$WARMUP'"
[[ -z $WINDOW || $WINDOW =~ ^[1-9][0-9]*$ ]] || usage_error "bad --window '$WINDOW'"
[[ $RUN_TIMEOUT =~ ^[1-9][0-9]*$ ]] || usage_error "bad --timeout '$RUN_TIMEOUT'"
[[ -n $OUT ]] || usage_error "--out needs a file name"
[[ $LINK == tcp || $LINK == verbs ]] || usage_error "--link wants tcp or verbs, got '$LINK'"

# The setup: --local, real clusters (--hostfile-a/-b) or the emulation.
if ((LOCAL)); then
    SETUP=local
    [[ -z $HOSTFILE_A$HOSTFILE_B ]] || usage_error "--local and --hostfile-a/--hostfile-b exclude each other"
    if [[ -n $FORWARDER_A$FORWARDER_B ]]; then
        [[ -n $FORWARDER_A && -n $FORWARDER_B ]] ||
            usage_error "--local with explicit forwarders needs both --forwarder-a and --forwarder-b"
    else
        FORWARDER_A=$LOCAL_DEFAULT_ADDR FORWARDER_B=$LOCAL_DEFAULT_ADDR
    fi
elif [[ -n $HOSTFILE_A$HOSTFILE_B ]]; then
    SETUP=cluster
    [[ -n $HOSTFILE_A && -n $HOSTFILE_B && -n $FORWARDER_A && -n $FORWARDER_B ]] ||
        usage_error "real-cluster mode needs all of --hostfile-a, --hostfile-b, --forwarder-a, --forwarder-b"
else
    SETUP=emulated
    [[ -z $FORWARDER_A$FORWARDER_B ]] ||
        usage_error "--forwarder-a/--forwarder-b need --local or --hostfile-a/--hostfile-b (the emulation's addresses are fixed)"
fi
if [[ $SETUP != emulated ]] && ((${#EMULATED_ONLY[@]})); then
    usage_error "${EMULATED_ONLY[0]} is for the emulated setup only (not with --local or --hostfile-a/-b)"
fi

# [tcp:|verbs:]HOST:PORT -> the address with its scheme (--link's if none),
# or status 1. Same syntax as zipper-run's.
with_scheme() {
    local a=$1 scheme=$LINK
    case $a in
        tcp:*) scheme=tcp a=${a#tcp:} ;;
        verbs:*) scheme=verbs a=${a#verbs:} ;;
    esac
    [[ $a =~ ^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]+)$ ]] || return 1
    ((BASH_REMATCH[2] >= 1 && BASH_REMATCH[2] <= 65535)) || return 1
    printf '%s:%s' "$scheme" "$a"
}
if [[ $SETUP == emulated ]]; then
    # The TCP addresses stay scheme-less: the same commands as ever.
    if [[ $LINK == verbs ]]; then
        ZIPPERD_LISTEN_A=verbs:$ZIPPERD_LISTEN_A ZIPPERD_LISTEN_B=verbs:$ZIPPERD_LISTEN_B
    fi
    FORWARDER_A=$ZIPPERD_LISTEN_A FORWARDER_B=$ZIPPERD_LISTEN_B
else
    fa=$(with_scheme "$FORWARDER_A") ||
        usage_error "--forwarder-a must be [tcp:|verbs:]HOST:PORT, got '$FORWARDER_A'"
    fb=$(with_scheme "$FORWARDER_B") ||
        usage_error "--forwarder-b must be [tcp:|verbs:]HOST:PORT, got '$FORWARDER_B'"
    FORWARDER_A=$fa FORWARDER_B=$fb
    ZIPPERD_LISTEN_A=$FORWARDER_A ZIPPERD_LISTEN_B=$FORWARDER_B
fi
# Does this script start zipperd, and must it do so before the native runs?
STARTS_ZIPPERD=0
[[ $SETUP == cluster ]] || ! has_mode forwarded || STARTS_ZIPPERD=1
ZIPPERD_EARLY=0
if ((STARTS_ZIPPERD)) && [[ $ZIPPERD_LISTEN_A == verbs:* || $ZIPPERD_LISTEN_B == verbs:* ]]; then
    ZIPPERD_EARLY=1
fi

# perftest: SERVER_DEV,CLIENT_DEV,SERVER_IP
PT_SERVER_DEV='' PT_CLIENT_DEV='' PT_SERVER_IP=''
if [[ -n $PERFTEST ]]; then
    IFS=',' read -r PT_SERVER_DEV PT_CLIENT_DEV PT_SERVER_IP extra <<<"$PERFTEST"
    [[ -n $PT_SERVER_DEV && -n $PT_CLIENT_DEV && -n $PT_SERVER_IP && -z ${extra:-} ]] ||
        usage_error "--perftest wants SERVER_DEV,CLIENT_DEV,SERVER_IP, got '$PERFTEST'"
    [[ $PT_SERVER_DEV =~ ^[A-Za-z0-9_.-]+$ && $PT_CLIENT_DEV =~ ^[A-Za-z0-9_.-]+$ ]] ||
        usage_error "--perftest: bad device name in '$PERFTEST'"
    [[ $PT_SERVER_DEV != "$PT_CLIENT_DEV" ]] ||
        usage_error "--perftest: server and client device are both '$PT_SERVER_DEV' (want two devices)"
    [[ $PT_SERVER_IP =~ ^[A-Za-z0-9._:-]+$ ]] || usage_error "--perftest: bad server address '$PT_SERVER_IP'"
fi
[[ -z $PERFTEST_GID || $PERFTEST_GID =~ ^[0-9]+$ ]] || usage_error "bad --perftest-gid '$PERFTEST_GID'"
[[ -z $PERFTEST_GID || -n $PERFTEST ]] || usage_error "--perftest-gid needs --perftest"

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
for c in timeout awk sort; do need_path "$c"; done
case $SETUP in
    emulated)
        [[ $(id -u) -eq 0 ]] || ((DRY_RUN)) || problems+=("must run as root (network namespaces; --local runs without)")
        for c in ip unshare; do need_path "$c"; done
        need_exe "$BIN/zipper-emulate" zipper-emulate
        ;;
    cluster)
        [[ -r $HOSTFILE_A ]] || problems+=("--hostfile-a: cannot read '$HOSTFILE_A'")
        [[ -r $HOSTFILE_B ]] || problems+=("--hostfile-b: cannot read '$HOSTFILE_B'")
        ;;
esac
if has_mode native_a || has_mode native_b; then
    need_path mpirun
    [[ $SETUP != emulated ]] ||
        need_exe "$BIN/zipper-netns-rsh" "zipper-netns-rsh (Open MPI's rsh agent for the emulated nodes)"
    for b in "${BENCH_LIST[@]}"; do need_exe "$BIN/osu_${b}_native" "native benchmark osu_${b}_native"; done
fi
if has_mode forwarded; then
    if ((STARTS_ZIPPERD)); then
        if [[ ! -e $BIN/zipperd ]]; then
            problems+=("zipperd not found: $BIN/zipperd -- the forwarded run needs it (build target zipperd, point --bin at the directory holding it, or leave the forwarded run out with --modes native_a,native_b)")
        else
            need_exe "$BIN/zipperd" zipperd
        fi
    fi
    need_exe "$BIN/zipper-run" "zipper-run (launcher of the forwarded run)"
    for b in "${BENCH_LIST[@]}"; do need_exe "$BIN/osu_$b" "libmmpi benchmark osu_$b"; done
fi
if [[ -n $PERFTEST ]]; then
    has_bench latency && need_path ib_send_lat
    { has_bench bw || has_bench bibw; } && need_path ib_write_bw
    if [[ -d /sys/class/infiniband ]]; then
        for d in "$PT_SERVER_DEV" "$PT_CLIENT_DEV"; do
            [[ -e /sys/class/infiniband/$d ]] ||
                problems+=("--perftest: no RDMA device '$d' on this host (have: $(cd /sys/class/infiniband && printf '%s ' *))")
        done
    else
        problems+=("--perftest: no RDMA device on this host (/sys/class/infiniband is missing); perftest runs between two local devices only")
    fi
fi
if ((${#problems[@]})); then
    printf '%s: error: cannot run:\n' "$PROG" >&2
    printf '  - %s\n' "${problems[@]}" >&2
    exit 1
fi

# Open MPI refuses root unless told; the emulation needs root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if ((DRY_RUN)); then
    RAW_DIR=$(readlink -m -- "$RAW_DIR")
    CMDLOG=/dev/null
else
    mkdir -p -- "$RAW_DIR" "$(dirname -- "$OUT")"
    RAW_DIR=$(readlink -f -- "$RAW_DIR")
    CMDLOG=$RAW_DIR/commands.txt
    : >"$CMDLOG"
fi
FAILED=()

# ------------------------------------------------------------------ cleanup
ZIPPERD_PID=''
ZIPPERD_BGPID=''
RUN_PID=''
PERF_SRV_PID=''
# shellcheck disable=SC2317 # called through the trap
cleanup() {
    local rc=$?
    if [[ -n $RUN_PID ]] && kill -0 "$RUN_PID" 2>/dev/null; then
        info "interrupted: stopping the running benchmark"
        kill -TERM "$RUN_PID" 2>/dev/null || true
        wait "$RUN_PID" 2>/dev/null || true
    fi
    if [[ -n $PERF_SRV_PID ]] && kill -0 "$PERF_SRV_PID" 2>/dev/null; then
        kill -TERM "$PERF_SRV_PID" 2>/dev/null || true
        wait "$PERF_SRV_PID" 2>/dev/null || true
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
    if ((TEARDOWN && !DRY_RUN)); then
        info "tearing the emulation down"
        "$BIN/zipper-emulate" down || info "zipper-emulate down failed"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

logcmd() { printf '%q ' "$@" >>"$CMDLOG"; printf '\n' >>"$CMDLOG"; }
show_cmd() { printf '%q ' "$@"; printf '\n'; } # --dry-run

# ------------------------------------------------------------------ helpers
# bench -> the passthrough options in the array BENCH_ARGS (no process
# substitution: the soft-RoCE guest has no /dev/fd).
bench_args() {
    BENCH_ARGS=()
    [[ -z $MSG_SIZES ]] || BENCH_ARGS+=(-m "$MSG_SIZES")
    [[ -z $ITERATIONS ]] || BENCH_ARGS+=(-i "$ITERATIONS")
    [[ -z $WARMUP ]] || BENCH_ARGS+=(-x "$WARMUP")
    [[ -z $WINDOW || $1 == latency ]] || BENCH_ARGS+=(-W "$WINDOW")
    return 0
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
    if ((DRY_RUN)); then
        show_cmd "$@"
        return 0
    fi
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

# Does --mpirun-args already place the ranks?
user_maps_ranks() {
    local a
    for a in "${MPIRUN_ARGS[@]}"; do
        [[ $a =~ ^-?-(map-by|npernode|npersocket|ppr|bynode|byslot|rankfile|rf|host|H)$ ]] && return 0
    done
    return 1
}

run_native() { # bench cluster(A|B)
    local b=$1 c=$2 n1=cluster${2}1 n2=cluster${2}2
    local -a pin=() args=() map=()
    bench_args "$b"
    args=("${BENCH_ARGS[@]}")
    case $SETUP in
        emulated)
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
                "${MPIRUN_ARGS[@]}" "$BIN/osu_${b}_native" "${args[@]}"
            ;;
        local)
            run_one "$b.native_${c,,}" \
                mpirun --oversubscribe -np 2 "${MPIRUN_ARGS[@]}" "$BIN/osu_${b}_native" "${args[@]}"
            ;;
        cluster)
            local hf=$HOSTFILE_A
            [[ $c == A ]] || hf=$HOSTFILE_B
            user_maps_ranks || map=(--map-by node)
            run_one "$b.native_${c,,}" \
                mpirun --hostfile "$hf" -np 2 "${map[@]}" "${MPIRUN_ARGS[@]}" \
                "$BIN/osu_${b}_native" "${args[@]}"
            ;;
    esac
}

start_zipperd() {
    local pidfile=$RAW_DIR/zipperd.pid log=$RAW_DIR/zipperd.log i
    local -a pre=() listen=(--listen "A=$ZIPPERD_LISTEN_A")
    [[ $SETUP != emulated ]] || pre=(ip netns exec zipper)
    # One listener when both sides share an address (--local's default).
    [[ ${ZIPPERD_LISTEN_B#tcp:} == "${ZIPPERD_LISTEN_A#tcp:}" ]] || listen+=(--listen "B=$ZIPPERD_LISTEN_B")
    local -a cmd=("${pre[@]}" "$BIN/zipperd" "${listen[@]}" --pid-file "$pidfile")
    if ((DRY_RUN)); then
        printf '%s&\n' "$(show_cmd "${cmd[@]}")"
        return 0
    fi
    rm -f -- "$pidfile"
    logcmd "${cmd[@]}"
    if [[ $SETUP == emulated ]]; then
        info "starting zipperd in netns zipper (log $log)"
    else
        info "starting zipperd (log $log)"
    fi
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
    if ((DRY_RUN)); then
        echo "kill -TERM <zipperd> (after reading VmHWM and VmRSS from /proc/<zipperd>/status)"
        return 0
    fi
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
    local -a args=() run=("$BIN/zipper-run" -x 1 -y 1)
    bench_args "$b"
    args=("${BENCH_ARGS[@]}")
    case $SETUP in
        emulated)
            run=("$BIN/zipper-run" --emulated --no-zipperd -x 1 -y 1)
            # zipper-run --emulated always gives the ranks the TCP address;
            # a later -x of the same variable wins in mpirun.
            [[ $FORWARDER_A != verbs:* ]] || run+=(--mpirun-args-a "-x MMPI_FORWARDER=$FORWARDER_A")
            [[ $FORWARDER_B != verbs:* ]] || run+=(--mpirun-args-b "-x MMPI_FORWARDER=$FORWARDER_B")
            ;;
        local)
            run+=(--local --forwarder-a "$FORWARDER_A" --forwarder-b "$FORWARDER_B" --no-zipperd)
            ;;
        cluster)
            run+=(--hostfile-a "$HOSTFILE_A" --hostfile-b "$HOSTFILE_B"
                --forwarder-a "$FORWARDER_A" --forwarder-b "$FORWARDER_B" --no-zipperd)
            ;;
    esac
    ((${#MPIRUN_ARGS[@]} == 0)) || run+=(--mpirun-args "${MPIRUN_ARGS[*]}")
    run_one "$b.forwarded" "${run[@]}" -- "$BIN/osu_$b" "${args[@]}"
}

# ------------------------------------------------------------------ perftest
# The sizes of the sweep, as the benchmarks walk it (bench/osu_p2p.h).
sweep_sizes() {
    local lo=$OSU_MIN_SIZE hi=$OSU_MAX_SIZE s
    if [[ -n $MSG_SIZES ]]; then
        if [[ $MSG_SIZES == *:* ]]; then
            [[ -z ${MSG_SIZES%%:*} ]] || lo=$((10#${MSG_SIZES%%:*}))
            [[ -z ${MSG_SIZES#*:} ]] || hi=$((10#${MSG_SIZES#*:}))
        else
            hi=$((10#$MSG_SIZES))
        fi
    fi
    for ((s = lo; s <= hi; s = s ? s * 2 : 1)); do echo "$s"; done
}

perftest_iters() { # bench size
    local win=${WINDOW:-$OSU_WINDOW} n
    if [[ -n $ITERATIONS ]]; then
        n=$ITERATIONS
    elif [[ $1 == latency ]]; then
        n=$(($2 > OSU_LARGE ? 1000 : 10000))
    else
        n=$(($2 > OSU_LARGE ? 20 : 100))
    fi
    [[ $1 == latency ]] || n=$((n * win))
    ((n >= 5)) || n=5 # perftest's minimum
    echo "$n"
}

# The value from a perftest client's output: ib_send_lat's t_avg (us), or
# ib_write_bw's BW average converted from MB/s (2^20 B) to MB/s (1e6 B).
parse_perftest() { # bench file
    if [[ $1 == latency ]]; then
        awk '
            /t_avg\[usec\]/ { for (i = 1; i <= NF; i++) if ($i ~ /^t_avg/) col = i; next }
            col && $1 ~ /^[0-9]+$/ && NF >= col && $col ~ /^[0-9.]+$/ { v = $col }
            END { if (v != "") print v }' "$2"
    else
        awk '
            /BW average\[MB\/sec\]/ { h = 1; next }
            h && $1 ~ /^[0-9]+$/ && NF >= 4 && $4 ~ /^[0-9.]+$/ { v = $4 }
            END { if (v != "") printf "%.2f\n", v * 1048576 / 1e6 }' "$2"
    fi
}

port_listening() { # port -> status 0 when something listens on TCP port
    ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# One perftest pair for one size; appends "size value" to $RAW_DIR/$b.perftest.tsv.
run_perftest_one() { # bench size
    local b=$1 size=$2 n tool rc=0 src=0 v i
    local -a opts=()
    n=$(perftest_iters "$b" "$size")
    case $b in
        latency) tool=ib_send_lat ;;
        bw) tool=ib_write_bw ;;
        bibw) tool=ib_write_bw opts=(-b) ;;
    esac
    opts+=(-F -p "$PERFTEST_PORT" -s "$size" -n "$n")
    [[ -z $PERFTEST_GID ]] || opts+=(-x "$PERFTEST_GID")
    local -a srv=("$tool" -d "$PT_SERVER_DEV" "${opts[@]}")
    local -a cli=("$tool" -d "$PT_CLIENT_DEV" "${opts[@]}" "$PT_SERVER_IP")
    if ((DRY_RUN)); then
        printf '%s&\n' "$(show_cmd "${srv[@]}")"
        show_cmd "${cli[@]}"
        return 0
    fi
    local tag=$b.perftest.$size
    local out=$RAW_DIR/$tag.out err=$RAW_DIR/$tag.err sout=$RAW_DIR/$tag.server.out
    local have_ss=0
    command -v ss >/dev/null 2>&1 && have_ss=1
    if ((have_ss)) && port_listening "$PERFTEST_PORT"; then
        info "FAILED $tag: TCP port $PERFTEST_PORT is already in use (a perftest server left over?)"
        FAILED+=("$tag")
        return 0
    fi
    logcmd "${srv[@]}"
    timeout --kill-after=5 "$RUN_TIMEOUT" "${srv[@]}" >"$sout" 2>&1 </dev/null &
    PERF_SRV_PID=$!
    # The client must not connect before the server listens.
    if ((have_ss)); then
        for ((i = 0; i < 300; i++)); do
            port_listening "$PERFTEST_PORT" && break
            kill -0 "$PERF_SRV_PID" 2>/dev/null || break
            sleep 0.1
        done
    else
        sleep 2
    fi
    logcmd "${cli[@]}"
    timeout --kill-after=5 "$RUN_TIMEOUT" "${cli[@]}" >"$out" 2>"$err" </dev/null &
    RUN_PID=$!
    wait "$RUN_PID" || rc=$?
    RUN_PID=''
    if ((rc != 0)); then
        # The server waits for a client that will not come: stop it.
        kill -TERM "$PERF_SRV_PID" 2>/dev/null || true
    fi
    wait "$PERF_SRV_PID" || src=$?
    PERF_SRV_PID=''
    v=$(parse_perftest "$b" "$out")
    if ((rc != 0 || src != 0)) || [[ -z $v ]]; then
        if ((rc == 124 || rc == 137)); then
            info "FAILED $tag: timed out after ${RUN_TIMEOUT}s"
        else
            local why="client exit status $rc, server exit status $src"
            [[ -n $v ]] || why+=", no result line in the client's output"
            info "FAILED $tag: $why"
        fi
        show_log "$out"
        show_log "$err"
        show_log "$sout"
        FAILED+=("$tag")
        return 0
    fi
    echo "$size $v" >>"$RAW_DIR/$b.perftest.tsv"
}

run_perftest() { # bench
    local b=$1 s t0=$SECONDS rows
    ((DRY_RUN)) || rm -f -- "$RAW_DIR/$b.perftest.tsv" "$RAW_DIR/$b".perftest.*.out
    ((DRY_RUN)) || : >"$RAW_DIR/$b.perftest.tsv"
    ((DRY_RUN)) || info "running $b.perftest ($PT_CLIENT_DEV -> $PT_SERVER_DEV $PT_SERVER_IP, one hop)"
    for s in $(sweep_sizes); do
        if ((s == 0)); then
            ((DRY_RUN)) || info "$b.perftest: size 0 skipped (perftest needs >= 1 byte)"
            continue
        fi
        run_perftest_one "$b" "$s"
    done
    if ((!DRY_RUN)); then
        rows=$(wc -l <"$RAW_DIR/$b.perftest.tsv")
        info "done $b.perftest: $rows sizes in $((SECONDS - t0)) s"
    fi
}

# ------------------------------------------------------------------ run
setup_text() {
    echo "setup: $SETUP"
    echo "link: $LINK (forwarder A $FORWARDER_A, forwarder B $FORWARDER_B)"
    case $SETUP in
        emulated) echo "native: two emulated nodes per cluster; forwarded: A -> zipperd (netns zipper) -> B" ;;
        local) echo "native: mpirun -np 2 on this host (native_a and native_b the same run); forwarded: A -> zipperd (started here) -> B" ;;
        cluster) echo "native: hostfiles $HOSTFILE_A, $HOSTFILE_B; forwarded: A -> zipperd (already serving) -> B" ;;
    esac
    if [[ -n $PERFTEST ]]; then
        echo "perftest: $PT_CLIENT_DEV -> $PT_SERVER_DEV ($PT_SERVER_IP)${PERFTEST_GID:+, GID index $PERFTEST_GID}: ONE hop; the forwarded run crosses two links plus zipperd"
    fi
}
if ((DRY_RUN)); then
    setup_text | sed 's/^/# /'
else
    setup_text >"$RAW_DIR/setup.txt"
    setup_text | while IFS= read -r l; do info "$l"; done
fi

if [[ $SETUP == emulated ]]; then
    emu=("$BIN/zipper-emulate" up --nodes-a 2 --nodes-b 2)
    ((UNSHAPED)) || emu+=(--rate-a "$RATE_A" --rate-b "$RATE_B")
    if ((DRY_RUN)); then
        show_cmd "${emu[@]}"
    else
        logcmd "${emu[@]}"
        info "bringing the emulation up: ${emu[*]:1}"
        "${emu[@]}" || die "zipper-emulate up failed"
    fi
fi

# A verbs listener fails at once without its RDMA device: find that out
# before the native runs, not after them.
ZIPPERD_UP=0
if ((ZIPPERD_EARLY)); then
    if start_zipperd; then
        ZIPPERD_UP=1
    else
        die "zipperd did not start on $ZIPPERD_LISTEN_A / $ZIPPERD_LISTEN_B (its error above); nothing was run. Use --link tcp, or --modes native_a,native_b to leave the forwarded runs out"
    fi
fi

for b in "${BENCH_LIST[@]}"; do
    has_mode native_a && run_native "$b" A
    has_mode native_b && run_native "$b" B
done

if [[ -n $PERFTEST ]]; then
    for b in "${BENCH_LIST[@]}"; do run_perftest "$b"; done
fi

if has_mode forwarded; then
    if ((!STARTS_ZIPPERD)); then
        for b in "${BENCH_LIST[@]}"; do run_forwarded "$b"; done
    elif ((ZIPPERD_UP)) || start_zipperd; then
        for b in "${BENCH_LIST[@]}"; do run_forwarded "$b"; done
        stop_zipperd
    else
        FAILED+=(zipperd-start)
        info "skipping the forwarded runs: zipperd did not start"
    fi
fi
((DRY_RUN == 0)) || exit 0

# ------------------------------------------------------------------ CSV
{
    echo benchmark,size_bytes,native_a,native_b,forwarded,fwd_over_native_a,fwd_over_native_b,fwd_over_sum_native,perftest,fwd_over_perftest
    for b in "${BENCH_LIST[@]}"; do
        for m in native_a native_b forwarded perftest; do
            f=$RAW_DIR/$b.$m.tsv
            if { has_mode "$m" || [[ $m == perftest && -n $PERFTEST ]]; } && [[ -f $f ]]; then
                sed "s/^/$m /" "$f"
            fi
        done | awk -v bench="$b" '
            function ratio(n, d) { return (n != "" && d != "" && d + 0 > 0) ? sprintf("%.4f", n / d) : "" }
            { seen[$2] = 1; v[$1, $2] = $3 }
            END {
                for (s in seen) {
                    a = v["native_a", s]; nb = v["native_b", s]; f = v["forwarded", s]; p = v["perftest", s]
                    sum = (bench == "latency" && a != "" && nb != "") ? a + nb : ""
                    printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", bench, s, a, nb, f,
                        ratio(f, a), ratio(f, nb), ratio(f, sum), p, ratio(f, p)
                }
            }' | sort -t, -k2,2n
    done
    if [[ -n $ZIPPERD_HWM ]]; then
        echo "zipperd,peak_rss_kib,,,$ZIPPERD_HWM,,,,,"
        echo "zipperd,rss_kib,,,$ZIPPERD_RSS,,,,,"
    fi
} >"$OUT"
info "wrote $OUT (raw outputs in $RAW_DIR)"

# ------------------------------------------------------------------ summary
# bw and bibw at 4 MiB (or the largest size with data), latency at 8 B (or
# the smallest size with data).
awk -F, -v benches=",$BENCHES," -v link="$LINK" -v setup="$SETUP" \
    -v pt="${PERFTEST:+$PT_CLIENT_DEV -> $PT_SERVER_DEV}" '
    NR == 1 { next }
    { a[$1, $2] = $3; nb[$1, $2] = $4; f[$1, $2] = $5; p[$1, $2] = $9; sizes[$1] = sizes[$1] " " $2 }
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
    function perf(bench, s, unit) {
        if (pt != "" && (bench, s) in p && p[bench, s] != "")
            printf "                   forwarded / perftest (one hop, %s) %s %s = %s\n", pt, p[bench, s], unit, r(f[bench, s], p[bench, s])
    }
    END {
        printf "summary (%s, %s link; forwarded = two hops through zipperd):\n", setup, link
        s = pick("bw", 4194304, 1)
        if (index(benches, ",bw,") == 0) ;
        else if (s != "") {
            printf "  bw    @ %8s B: forwarded %s MB/s / native A %s MB/s = %s\n", s, f["bw", s], z(a["bw", s]), r(f["bw", s], a["bw", s])
            perf("bw", s, "MB/s")
        } else print "  bw: no forwarded data"
        t = pick("bibw", 4194304, 1)
        if (index(benches, ",bibw,") == 0 || index(benches, ",bw,") == 0) ;
        else if (t != "" && s != "") {
            printf "  bibw  @ %8s B: forwarded bibw %s MB/s / forwarded bw @ %s B %s MB/s = %s\n", t, f["bibw", t], s, f["bw", s], r(f["bibw", t], f["bw", s])
            perf("bibw", t, "MB/s")
        } else print "  bibw/bw: no forwarded data"
        l = pick("latency", 8, 0)
        if (index(benches, ",latency,") == 0) ;
        else if (l != "") {
            sum = (a["latency", l] != "" && nb["latency", l] != "") ? a["latency", l] + nb["latency", l] : ""
            printf "  lat   @ %8s B: forwarded %s us / (native A %s + native B %s us) = %s\n", l, f["latency", l], z(a["latency", l]), z(nb["latency", l]), r(f["latency", l], sum)
            perf("latency", l, "us")
        } else print "  latency: no forwarded data"
        if (("zipperd", "peak_rss_kib") in f) printf "  zipperd peak RSS: %s KiB\n", f["zipperd", "peak_rss_kib"]
    }' "$OUT"

if ((${#FAILED[@]})); then
    info "some runs failed: ${FAILED[*]} (see $RAW_DIR)"
    exit 1
fi
exit 0
