#!/usr/bin/env bash
# Installs the build into a scratch prefix and checks what a bridge node
# gets: `systemd-analyze verify` is clean on the installed zipperd.service,
# the man pages exist, the example settings parse, and no bare osu_* lands
# in bin (the benchmarks live in libexec/zipper, their links resolve).
# usage: unit_verify.sh BUILD_DIR
set -euo pipefail
build=$1
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p" >/dev/null
unit=$p/lib/systemd/system/zipperd.service
grep -q "^ExecStart=$p/bin/zipperd --config $p/etc/zipper/zipperd.toml$" "$unit" ||
    { echo "FAIL: ExecStart does not name the installed zipperd and PREFIX/etc settings"; exit 1; }
# verify runs man(1) for Documentation=: point it at the installed pages.
out=$(MANPATH=$p/share/man systemd-analyze verify "$unit" 2>&1) || { echo "FAIL: $out"; exit 1; }
[[ -z $out ]] || { echo "FAIL: systemd-analyze verify said: $out"; exit 1; }
echo "systemd-analyze verify $unit: clean"
# A man page for every command in bin.
pages=()
for cmd in "$p"/bin/*; do
    name=${cmd##*/}
    m=$(ls "$p"/share/man/man[18]/"$name".[18] 2>/dev/null | head -1)
    [[ -n $m && -s $m ]] || { echo "FAIL: no man page for bin/$name"; exit 1; }
    grep -q '^\.SH OPTIONS\|^\.SH DESCRIPTION' "$m" || { echo "FAIL: $m is empty"; exit 1; }
    pages+=("$name")
done
echo "man pages: ${pages[*]}"
"$p/bin/zipperd" --config "$p/etc/zipper/zipperd.toml" --listen A=127.0.0.1:1 --check-config >/dev/null ||
    { echo "FAIL: the example settings do not parse"; exit 1; }
if ls "$p/bin" | grep -q '^osu_'; then echo "FAIL: osu_* in bin: $(ls "$p/bin")"; exit 1; fi
for f in osu_latency osu_bw_native zipper-bench zipperd zipper-run zipper-tune; do
    [[ -x $p/libexec/zipper/$f ]] || { echo "FAIL: libexec/zipper/$f missing or dangling"; exit 1; }
done
[[ $(readlink -f "$p/bin/zipper-bench") == "$(readlink -f "$p/libexec/zipper/zipper-bench")" ]] ||
    { echo "FAIL: bin/zipper-bench does not lead to libexec/zipper"; exit 1; }
[[ -s $p/lib/sysusers.d/zipper.conf && -s $p/share/doc/zipper/examples/zipperd.toml ]] ||
    { echo "FAIL: sysusers entry or example missing"; exit 1; }
echo "PASS service_unit_verify"
