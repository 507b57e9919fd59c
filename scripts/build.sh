#!/usr/bin/env bash
# Configures and builds Tremor for one MPI flavour into build-<flavour>/.
# usage: [TREMOR_TARGETS="t1 t2"] scripts/build.sh [mpich|openmpi] [extra cmake arguments...]
# TREMOR_TARGETS builds only those targets (scripts/demo.sh); default: all.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-mpich}
shift || true
# With ccache (scripts/install-deps.sh installs it) the second flavour reuses
# the objects that do not depend on the MPI (the statistics, the run file, the
# analysis, their tests), and a rebuild after a revert (scripts/mutants.sh)
# costs nothing. Paths are made relative to the tree, so that two build
# directories of one tree share objects.
launcher=()
if command -v ccache >/dev/null; then
  with_ccache="cmake;-E;env;CCACHE_BASEDIR=$top;CCACHE_NOHASHDIR=true;ccache"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$with_ccache" -DCMAKE_CXX_COMPILER_LAUNCHER="$with_ccache")
fi
cmake -S "$top" -B "$top/build-$flavour" -DTREMOR_MPI="$flavour" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@" \
  >/dev/null
targets=()
[ -n "${TREMOR_TARGETS:-}" ] && targets=(--target ${TREMOR_TARGETS})
cmake --build "$top/build-$flavour" -j "$(nproc)" "${targets[@]}"
