#!/usr/bin/env bash
# Builds the .deb with cpack, installs it with apt into a clean Debian 12
# root (debootstrap --variant=minbase, cached as a tarball), and there starts
# zipperd from the package as the package's user `zipper`, asks it for its
# status with zipperctl and stops it. Also checks the package's contents
# (unit, example settings, man pages, headers, pkg-config and CMake files, no
# bare osu_* in bin).
# usage: deb_chroot.sh BUILD_DIR
# Environment: ZIPPER_DEBROOT_CACHE (default /var/cache/zipper-debroot),
# ZIPPER_DEB_MIRROR (default: the host's Debian mirror, else deb.debian.org).
set -euo pipefail
build=$(cd "$1" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip "debootstrap not installed (deploy/install-deps.sh)"
command -v cpack >/dev/null || skip "cpack not found"
work=$(mktemp -d /tmp/zipper-deb.XXXXXX)
root=$work/root
zpid=
cleanup() {
    [[ -z $zpid ]] || kill "$zpid" 2>/dev/null || true
    for m in dev proc; do umount -l "$root/$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
t0=$(date +%s)

# ---- the package
(cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) ||
    { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/pkg/zipper_*.deb)
echo "package: ${deb##*/} ($(du -k "$deb" | cut -f1) KiB), built in $(($(date +%s) - t0)) s"
dpkg-deb -I "$deb" | grep -E "^ (Package|Version|Depends):"
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents"
for f in ./usr/bin/zipperd ./usr/bin/zipperctl ./usr/bin/zipper-run ./lib/systemd/system/zipperd.service \
    ./usr/lib/systemd/system/zipperd.service ./etc/zipper/zipperd.toml ./usr/include/mmpi.h \
    ./usr/share/man/man8/zipperd.8 ./usr/share/man/man8/zipperctl.8 ./usr/share/man/man1/zipper-run.1 \
    ./usr/libexec/zipper/osu_latency; do
    grep -qxF "$f" "$work/contents" && echo "  has $f"
done
for f in ./usr/bin/zipperd ./usr/bin/zipperctl ./usr/lib/systemd/system/zipperd.service \
    ./etc/zipper/zipperd.toml ./usr/include/mmpi.h ./usr/share/man/man8/zipperd.8 \
    ./usr/share/man/man8/zipperctl.8 ./usr/share/man/man1/zipper-run.1 \
    ./usr/lib/sysusers.d/zipper.conf ./usr/libexec/zipper/osu_latency; do
    grep -qxF "$f" "$work/contents" || fail "the package lacks $f"
done
grep -q '/pkgconfig/mmpi.pc$' "$work/contents" || fail "no mmpi.pc"
grep -q '/cmake/mmpi/mmpiConfig.cmake$' "$work/contents" || fail "no mmpiConfig.cmake"
grep -q '^\./usr/bin/osu_' "$work/contents" && fail "bare osu_* in /usr/bin"

# ---- a clean Debian 12 root, cached
cache=${ZIPPER_DEBROOT_CACHE:-/var/cache/zipper-debroot}
mirror=${ZIPPER_DEB_MIRROR:-$(sed -n 's|^URIs: *\(http[^ ]*/debian\)/*$|\1|p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [[ ! -s $cache/bookworm-minbase.tar ]]; then
    echo "debootstrap bookworm (minbase) from $mirror into the cache"
    debootstrap --variant=minbase bookworm "$work/boot" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { tail -5 "$work/debootstrap.log"; skip "debootstrap cannot fetch bookworm from $mirror"; }
    tar -C "$work/boot" -cf "$cache/bookworm-minbase.tar.tmp" . && mv "$cache/bookworm-minbase.tar.tmp" "$cache/bookworm-minbase.tar"
    rm -rf "$work/boot"
fi
flock -u 9
mkdir "$root"
tar -C "$root" -xf "$cache/bookworm-minbase.tar"
echo "clean root ready after $(($(date +%s) - t0)) s"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -qq >"$work/apt.log" 2>&1 || { tail -5 "$work/apt.log"; skip "apt-get update in the clean root failed (no mirror?)"; }
in_root apt-get install -y -qq --no-install-recommends "/tmp/${deb##*/}" >>"$work/apt.log" 2>&1 ||
    { tail -20 "$work/apt.log"; fail "apt-get install of the package failed"; }
echo "installed with apt in $(($(date +%s) - t0)) s: $(in_root dpkg-query -W -f='${Package} ${Version} ${Status}' zipper)"
in_root getent passwd zipper || fail "postinst did not create user zipper"
in_root zipperd --version
# zipper-run (Python) from the package: its zipper_run package and python3 dependency.
in_root zipper-run --version || fail "zipper-run from the package does not start"

# ---- start zipperd from the package, as the service user
mkdir -p "$root/run/zipper"
chroot "$root" chown zipper:zipper /run/zipper
cat >"$root/etc/zipper/zipperd.toml" <<TOML
[listen]
A = "127.0.0.1:0"
B = "127.0.0.1:0"
[control]
socket = "/run/zipper/zipperd.sock"
TOML
chroot --userspec=zipper:zipper "$root" /usr/bin/zipperd --config /etc/zipper/zipperd.toml \
    >"$work/zipperd.log" 2>&1 &
zpid=$!
for _ in $(seq 100); do [[ -S $root/run/zipper/zipperd.sock ]] && break; sleep 0.1; done
in_root zipperctl status || { cat "$work/zipperd.log"; fail "zipperctl status in the clean root"; }
[[ $(in_root zipperctl status --json | grep -c '"state": "running"') == 1 ]] || fail "not running"
# chroot execs zipperd: the pid is zipperd's.
uid=$(in_root id -u zipper)
[[ $(ps -o uid= -p "$zpid" | tr -d ' ') == "$uid" ]] || fail "zipperd does not run as user zipper (uid $uid)"
echo "zipperd runs as zipper (uid $uid) from the package"
echo "control socket: $(stat -c '%A uid %u gid %g' "$root/run/zipper/zipperd.sock")"
kill -TERM "$zpid"
rc=0
wait "$zpid" || rc=$?
zpid=
cat "$work/zipperd.log"
((rc == 0)) || fail "zipperd exited with $rc"
echo "PASS package_deb_chroot ($(($(date +%s) - t0)) s)"
