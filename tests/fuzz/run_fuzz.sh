#!/usr/bin/env bash
# Builds one libFuzzer target with clang (ASan + UBSan) and runs it briefly.
# usage: run_fuzz.sh SOURCE_DIR WORK_DIR TARGET SECONDS
# Exit 77 (CTest: skipped) when clang or libFuzzer is missing.
set -euo pipefail
src=$1 work=$2 target=$3 secs=$4
cxx=${CLANGXX:-clang++}
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "SKIP: $cxx not found (apt-get install clang libclang-rt-14-dev)"
    exit 77
fi
mkdir -p "$work"
probe=$work/probe.cpp
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe" -o "$work/probe" 2>"$work/probe.log"; then
    echo "SKIP: $cxx cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev): $(head -3 "$work/probe.log")"
    exit 77
fi
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$src" $(pkg-config --cflags libsodium))
srcs=("$src/tests/fuzz/$target.cpp" "$src/proto/frame.cpp" "$src/proto/site_hello.cpp" "$src/proto/auth.cpp"
      "$src/proto/endpoint.cpp" "$src/proto/frame_assembler.cpp" "$src/proto/payload_pipe.cpp"
      "$src/proto/tcp/tcp_link.cpp")
bin=$work/$target
if [[ ! -x $bin ]] || [[ -n $(find "${srcs[@]}" "$src/proto" -newer "$bin" -name '*.[ch]*' 2>/dev/null | head -1) ]]; then
    echo "building $target with $cxx (ASan + UBSan + libFuzzer)"
    nice -n 10 "$cxx" "${flags[@]}" "${srcs[@]}" -o "$bin" $(pkg-config --libs libsodium) -lpthread
fi
corpus=$work/$target.corpus
mkdir -p "$corpus"
# Seeds: a HELLO frame (16-byte payload) followed by an EAGER frame with 3
# payload bytes; the stream target takes a control byte first.
z() { head -c "$1" /dev/zero; }
hello() { printf 'PPIZ\001\000\001\000'; z 32; printf '\020\000\000\000'; z 20
          printf '\000\000\000\000\001\000\000\000\001\000\000\000\000\000\000\000'; }
eager() { printf 'PPIZ\001\000\004\000'; z 32; printf '\003\000\000\000'; z 4
          printf '\003'; z 15; printf 'abc'; }
if [[ $target == fuzz_tcp_stream ]]; then
    { printf '\000'; hello; eager; } >"$corpus/seed-frames"
else
    { hello; } >"$corpus/seed-hello"
    { eager; } >"$corpus/seed-eager"
fi
exec "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$work/$target-" \
    -print_final_stats=1 "$corpus"
