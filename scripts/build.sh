#!/usr/bin/env bash
# Configures and builds Tremor for one MPI flavour into build-<flavour>/.
# usage: scripts/build.sh [mpich|openmpi] [extra cmake arguments...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-mpich}
shift || true
cmake -S "$top" -B "$top/build-$flavour" -DTREMOR_MPI="$flavour" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$top/build-$flavour" -j "$(nproc)"
