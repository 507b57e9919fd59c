#!/usr/bin/env bash
# Installs Tremor's build and test dependencies from Debian 12's archive.
set -euo pipefail
packages=(
  build-essential cmake pkg-config gfortran
  ccache     # the second MPI flavour's build reuses the MPI-free objects (scripts/build.sh)
  clang libclang-rt-14-dev   # libFuzzer and the sanitizer pass (scripts/test-sanitizers.sh)
  mpich libmpich-dev openmpi-bin libopenmpi-dev
  libpapi-dev papi-tools libhdf5-dev hdf5-tools
  libboost-math-dev libspdlog-dev catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev
  python3 python3-h5py python3-numpy python3-scipy python3-matplotlib
  chromium   # renders the HTML report in the ux tests
  valgrind   # callgrind: scripts/bench-overhead.sh --callgrind
  elk-lapw   # a real Fortran MPI application (Open MPI): coverage tests, campaigns
  mocassin   # a real Fortran MPI application (MPICH): interference campaign
)
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
