#!/usr/bin/env bash
# Installs what zipper needs to build, test and run on Debian 12 (root).
# Idempotent: packages already present are skipped quickly.
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config clang-format
  libopenmpi-dev openmpi-bin gfortran
  libspdlog-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
  libsystemd-dev libmicrohttpd-dev help2man prometheus jq curl debootstrap
  libgtest-dev libgmock-dev libbenchmark-dev
  libsodium-dev libmunge-dev libmetis-dev munge clang libclang-rt-14-dev
  iproute2 util-linux procps python3 python3-matplotlib python3-mpi4py python3-numpy
  libarmci-mpi-dev libglobalarrays-dev libscalapack-openmpi-dev liblapack-dev libblas-dev
  slurmctld slurmd slurm-client
  petsc-dev libpetsc3.18-dev-examples
  libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
  libhdf5-openmpi-dev hdf5-tools python3-h5py-mpi libpnetcdf-dev pnetcdf-bin libnetcdf-mpi-dev netcdf-bin
)
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
