#!/usr/bin/env bash
# Configures and builds all of zipper, tests and benchmarks included, into
# ./build (Release with debug info). quickstart.sh builds only its targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DZIPPER_BUILD_TESTS=ON -DZIPPER_BUILD_BENCH=ON >/dev/null
cmake --build "$root/build" -j"$(nproc --all)"
# The MPICH configuration beside it, where MPICH is installed (docs/mpi.md):
# only libmmpi-mpich and its transparent layer, which the test mpich_local
# runs with build's zipperd and zipper-run. A test build, for CI's time: TCP
# links only, -O1 without debug information (two thirds of -O2 -g's time).
if command -v mpicc.mpich >/dev/null; then
  cmake -S "$root" -B "$root/build-mpich" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O1 \
    -DCMAKE_CXX_FLAGS=-O1 -DZIPPER_MPI=mpich -DZIPPER_WITH_VERBS=OFF -DZIPPER_BUILD_TESTS=OFF \
    -DZIPPER_BUILD_BENCH=OFF >/dev/null
  cmake --build "$root/build-mpich" -j"$(nproc --all)" --target mmpi mmpi_transparent
fi
