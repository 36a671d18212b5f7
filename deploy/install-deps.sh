#!/usr/bin/env bash
# Installs the Debian 12 packages zipper needs (root). Idempotent: packages
# already present are skipped quickly.
#   install-deps.sh            everything: build, run and every test suite
#                              (run-tests.sh)
#   install-deps.sh --minimal  only what building and running zipperd, libmmpi,
#                              the launcher and the emulation need (quickstart.sh)
set -euo pipefail
# Build and run: the compiler, CMake, Open MPI, the libraries zipperd and
# libmmpi link (CMakeLists.txt's REQUIRED find_package / pkg_check_modules),
# Python for zipper-run and the generated API, and the emulation's commands
# (ip/tc from iproute2, unshare/taskset from util-linux).
MINIMAL=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
  libsystemd-dev libmicrohttpd-dev libsodium-dev libmetis-dev
  iproute2 util-linux procps python3
)
# The tests, the optional features they exercise (munge, verbs, Fortran) and
# the applications the transparent, conformance, MPI-IO and Slurm suites run.
TESTS=(
  clang-format gfortran help2man prometheus jq curl debootstrap
  libgtest-dev libgmock-dev libbenchmark-dev
  libmunge-dev munge clang libclang-rt-14-dev
  python3-matplotlib python3-mpi4py python3-numpy
  libarmci-mpi-dev libglobalarrays-dev libscalapack-openmpi-dev liblapack-dev libblas-dev
  slurmctld slurmd slurm-client
  petsc-dev libpetsc3.18-dev-examples
  libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
  libhdf5-openmpi-dev hdf5-tools python3-h5py-mpi libpnetcdf-dev pnetcdf-bin libnetcdf-mpi-dev netcdf-bin
  # MPICH 4 beside Open MPI: libmmpi's MPICH configuration and mpich_local
  # (docs/mpi.md). Debian's alternatives keep mpicc/mpirun on Open MPI.
  libmpich-dev mpich
)
case "${1:-}" in
  --minimal) PKGS=("${MINIMAL[@]}") ;;
  "") PKGS=("${MINIMAL[@]}" "${TESTS[@]}") ;;
  *) echo "usage: install-deps.sh [--minimal]" >&2; exit 2 ;;
esac
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages (${missing[*]}); run as root or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
