#!/usr/bin/env bash
# Configures and builds all of zipper, tests and benchmarks included, into
# ./build (Release with debug info). quickstart.sh builds only its targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DZIPPER_BUILD_TESTS=ON -DZIPPER_BUILD_BENCH=ON >/dev/null
cmake --build "$root/build" -j"$(nproc --all)"
