#!/usr/bin/env bash
# Installs Tremor's dependencies from Debian 12's archive.
# usage: scripts/install-deps.sh [--tests]
#   (none)   what building Tremor (MPICH) and running the bundled demo need
#   --tests  also what the test suite needs (scripts/test-all.sh passes it)
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  ccache     # the second MPI flavour's build reuses the MPI-free objects (scripts/build.sh)
  mpich libmpich-dev
  libpapi-dev libhdf5-dev
  libsqlite3-dev   # `tremor fleet`: the fleet database
  libboost-math-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  python3 python3-h5py python3-numpy   # scripts/demo_truth.py reads the run and the injector's logs
)
if [ "${1:-}" = --tests ]; then
  packages+=(
    gfortran   # the Fortran test programs
    clang libclang-rt-14-dev   # libFuzzer and the sanitizer pass (scripts/test-sanitizers.sh)
    openmpi-bin libopenmpi-dev   # the second flavour
    papi-tools hdf5-tools catch2 libbenchmark-dev
    python3-scipy python3-matplotlib python3-pandas   # tremor-plot and the tremor Python package
    chromium   # renders the HTML report in the ux tests
    valgrind   # callgrind: scripts/bench-overhead.sh --callgrind
    elk-lapw   # a real Fortran MPI application (Open MPI): coverage tests, campaigns
    mocassin   # a real Fortran MPI application (MPICH): interference campaign
    slurm-wlm munge   # a real single-host Slurm: integration.slurm_job (docs/slurm.md)
  )
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--tests]" >&2
  exit 1
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
