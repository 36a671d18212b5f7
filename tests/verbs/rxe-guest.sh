#!/usr/bin/env bash
# Runs a command inside a throw-away qemu guest (TCG) that boots Debian's kernel
# with soft-RoCE (rdma_rxe) and two RoCE subnets, and returns its output and
# exit status.
#
#   rxe-guest.sh [--timeout SECONDS] [--mem MiB] [--smp N] [--stage2 FILE] -- COMMAND [ARGS...]
#
# --stage2 replaces rxe-stage2.sh (what PID 1 runs after the overlay root is
# mounted), e.g. tests/service/systemd-stage2.sh, which boots systemd.
#
# Guest layout (all in the init network namespace: rxe on the 6.1 kernel does
# not work in other namespaces; see docs/verbs.md):
#   subnet A: ethA 10.1.0.1 (rxeA)   <-veth->  zipA 10.1.0.254 (rxe_zA)
#   subnet B: zipB 10.2.0.254 (rxe_zB) <-veth-> ethB 10.2.0.1 (rxeB)
# Policy routing (rule per oif, local rule moved to priority 1000) keeps each
# address pair on its wire, so A->B direct is unreachable.
#
# The host's / is shared read-only over virtio 9p with a tmpfs overlay, so the
# guest runs the host's own binaries (COMMAND is a host path). The kernel
# package is unpacked into $ZIPPER_RXE_CACHE (default /var/cache/zipper-rxe),
# never installed. Missing packages are installed with apt when run as root.
#
# Exit status: COMMAND's status; 77 when qemu or the kernel cannot be had
# (CTest SKIP); 124 on timeout; 125 when the guest died without a status.
# Environment: ZIPPER_RXE_CACHE, ZIPPER_RXE_ACCEL (tcg|kvm, default tcg),
# ZIPPER_RXE_KEEP=1 keeps the per-run directory (console log) for debugging.
set -euo pipefail
PROG=${0##*/}
TIMEOUT=300 MEM=2048 SMP=2 STAGE2=''
while (($#)); do
    case $1 in
        --timeout) TIMEOUT=$2; shift 2 ;;
        --mem) MEM=$2; shift 2 ;;
        --smp) SMP=$2; shift 2 ;;
        --stage2) STAGE2=$2; shift 2 ;;
        --) shift; break ;;
        -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
(($#)) || { echo "$PROG: no command given (try --help)" >&2; exit 2; }

skip() { echo "SKIP: $PROG: $*"; exit 77; }
say() { echo "$PROG: $*" >&2; }

CACHE=${ZIPPER_RXE_CACHE:-/var/cache/zipper-rxe}
T0=$(date +%s.%N)

# ---------------------------------------------------------------- packages
PKGS=(qemu-system-x86 busybox-static rdma-core ibverbs-providers ibverbs-utils rdmacm-utils)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    [[ $(id -u) -eq 0 ]] || skip "missing packages ${missing[*]} and not root to install them"
    command -v apt-get >/dev/null || skip "missing packages ${missing[*]} and no apt-get"
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1 ||
        skip "cannot install ${missing[*]} with apt-get"
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found"
BUSYBOX=/bin/busybox
[[ -x $BUSYBOX ]] || BUSYBOX=$(command -v busybox) || skip "busybox not found"

# ---------------------------------------------------------------- kernel
mkdir -p "$CACHE" 2>/dev/null || skip "cannot create kernel cache $CACHE"
exec 9>"$CACHE/.lock"
flock 9
KPKG=$(cat "$CACHE/kpkg" 2>/dev/null || true)
if [[ -z $KPKG || ! -d $CACHE/root/lib/modules ]]; then
    KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
    [[ -n $KPKG ]] || skip "cannot resolve the Debian kernel package (apt-cache depends linux-image-amd64)"
    deb=$(ls "$CACHE"/"$KPKG"_*.deb 2>/dev/null | head -1 || true)
    if [[ -z $deb ]]; then
        say "downloading $KPKG into $CACHE"
        (cd "$CACHE" && apt-get download "$KPKG" >/dev/null 2>&1) || skip "cannot download $KPKG"
        deb=$(ls "$CACHE"/"$KPKG"_*.deb | head -1)
    fi
    rm -rf "$CACHE/root.tmp"
    dpkg-deb -x "$deb" "$CACHE/root.tmp" || skip "cannot unpack $deb"
    kver=$(ls "$CACHE/root.tmp/lib/modules" | head -1)
    "$BUSYBOX" depmod -b "$CACHE/root.tmp" "$kver" || skip "busybox depmod failed"
    rm -rf "$CACHE/root" && mv "$CACHE/root.tmp" "$CACHE/root"
    echo "$KPKG" >"$CACHE/kpkg"
    rm -f "$CACHE/initrd.gz"
fi
KVER=$(ls "$CACHE/root/lib/modules" | head -1)
KMODS=$CACHE/root/lib/modules/$KVER
VMLINUZ=$CACHE/root/boot/vmlinuz-$KVER
[[ -r $VMLINUZ ]] || skip "kernel image $VMLINUZ missing"

# ---------------------------------------------------------------- initramfs
# Static busybox plus the modules needed to mount the host root over 9p.
HERE=$(cd "$(dirname "$0")" && pwd)
if [[ ! -s $CACHE/initrd.gz || $HERE/rxe-init.sh -nt $CACHE/initrd.gz ]]; then
    ird=$(mktemp -d)
    mkdir -p "$ird"/{bin,dev,proc,sys,mnt,newroot,lib/modules}
    cp "$BUSYBOX" "$ird/bin/busybox"
    ln -s busybox "$ird/bin/sh"
    # Dependencies first, from modules.dep (busybox depmod format).
    mods=()
    resolve() {
        local m=$1 line dep
        line=$(grep -E "(^|/)$m\.ko:" "$KMODS/modules.dep" | head -1) || return 0
        for dep in ${line#*:}; do resolve "$(basename "$dep" .ko)"; done
        mods+=("$KMODS/${line%%:*}")
    }
    for m in virtio_pci 9pnet_virtio 9p overlay; do resolve "$m"; done
    : >"$ird/modlist"
    declare -A seen=()
    for p in "${mods[@]}"; do
        [[ -z ${seen[$p]:-} ]] || continue
        seen[$p]=1
        cp "$p" "$ird/lib/modules/"
        echo "${p##*/}" >>"$ird/modlist"
    done
    cp "$HERE/rxe-init.sh" "$ird/init"
    chmod +x "$ird/init"
    (cd "$ird" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1) >"$CACHE/initrd.gz.tmp"
    mv "$CACHE/initrd.gz.tmp" "$CACHE/initrd.gz"
    rm -rf "$ird"
fi
flock -u 9

# ---------------------------------------------------------------- run
RUN=$(mktemp -d /tmp/zipper-rxe.XXXXXX)
cleanup() { [[ ${ZIPPER_RXE_KEEP:-0} == 1 ]] && say "run directory kept: $RUN" || rm -rf "$RUN"; }
trap cleanup EXIT
{
    printf 'cd %q\n' "$PWD"
    printf 'export KMODS=%q\n' "$CACHE/root/lib/modules"
    printf 'export KVER=%q\n' "$KVER"
    printf 'export ZIPPER_RXE_T0=%q\n' "$T0"
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} >"$RUN/cmd.sh"
cp "${STAGE2:-$HERE/rxe-stage2.sh}" "$RUN/stage2.sh"

accel=(-accel tcg,thread=multi -cpu max)
if [[ ${ZIPPER_RXE_ACCEL:-tcg} == kvm ]]; then accel=(-accel kvm -cpu host); fi
BOOT_TIMEOUT=${ZIPPER_RXE_BOOT_TIMEOUT:-120}
DEADLINE=$(($(date +%s) + TIMEOUT))
# boot: one qemu run; returns qemu's status, 200 when the guest did not reach
# stage 2 within BOOT_TIMEOUT (a TCG boot rarely wedges under host load).
boot() {
    rm -f "$RUN/started" "$RUN/stdout" "$RUN/stderr" "$RUN/rc" "$RUN/boot_s"
    local left=$((DEADLINE - $(date +%s)))
    ((left > 10)) || return 124
    timeout --kill-after=5 "$left" qemu-system-x86_64 "${accel[@]}" \
        -machine pc -nodefaults -no-user-config -m "$MEM" -smp "$SMP" -display none -no-reboot \
        -kernel "$VMLINUZ" -initrd "$CACHE/initrd.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init" \
        -serial "file:$RUN/console.log" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=$RUN,mount_tag=zipperio,security_model=none,multidevs=remap" \
        </dev/null >"$RUN/qemu.log" 2>&1 &
    local qpid=$! waited=0
    while [[ ! -e $RUN/started ]] && kill -0 "$qpid" 2>/dev/null && ((waited < BOOT_TIMEOUT * 10)); do
        sleep 0.1
        waited=$((waited + 1))
    done
    if [[ ! -e $RUN/started ]] && kill -0 "$qpid" 2>/dev/null; then
        kill "$qpid" 2>/dev/null
        wait "$qpid" 2>/dev/null
        return 200
    fi
    # Live output: the per-run directory is the guest's writable share.
    touch "$RUN/stdout"
    tail -n +1 -f --pid="$qpid" "$RUN/stdout" &
    local tpid=$! rc=0
    wait "$qpid" || rc=$?
    wait "$tpid" 2>/dev/null
    return "$rc"
}
say "booting $KVER in qemu (${accel[1]}), timeout ${TIMEOUT}s"
rc=0
boot || rc=$?
if ((rc == 200)); then
    say "guest did not reach stage 2 within ${BOOT_TIMEOUT}s; console tail:"
    tail -n 5 "$RUN/console.log" >&2 || true
    say "retrying the boot once"
    rc=0
    boot || rc=$?
fi
T1=$(date +%s.%N)
[[ -f $RUN/stderr ]] && cat "$RUN/stderr" >&2
if [[ -f $RUN/boot_s ]]; then say "guest reached the command after $(cat "$RUN/boot_s") s"; fi
say "guest total $(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.1f", b-a}') s"
if ((rc == 124 || rc == 137 || rc == 200)); then
    if ((rc == 200)); then say "guest did not boot, twice; console tail:"; else say "timed out after ${TIMEOUT}s; console tail:"; fi
    tail -n 30 "$RUN/console.log" >&2 || true
    exit 124
fi
if [[ ! -f $RUN/rc ]]; then
    say "guest ended without an exit status (qemu status $rc); qemu log and console tail:"
    tail -n 5 "$RUN/qemu.log" >&2 || true
    tail -n 40 "$RUN/console.log" >&2 || true
    if grep -qiE "could not|failed to|cannot" "$RUN/qemu.log" 2>/dev/null; then
        skip "qemu cannot run here: $(head -1 "$RUN/qemu.log")"
    fi
    exit 125
fi
exit "$(cat "$RUN/rc")"
