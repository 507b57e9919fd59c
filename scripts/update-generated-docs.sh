#!/usr/bin/env bash
# Rewrites the documentation generated from Tremor's tables: the settings
# tables and exit statuses between the GENERATED markers of README.md (and
# injector/README.md, scripts/README.md) from
# `tremor config --markdown profiler|injector|exit-codes`, and docs/intercepted_calls.md
# from interpose/mpi_calls.py. The CTest docs.generated_tables fails until this
# has been run after a table changed.
# usage: scripts/update-generated-docs.sh [build-dir]   (default: build-mpich)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-mpich}
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "update-generated-docs: $build is not a configured build directory (scripts/build.sh makes one)" >&2
  exit 2
fi
cmake --build "$build" --target tremor >/dev/null
python=/usr/bin/python3
[[ -x $python ]] || python=python3
exec "$python" "$top/scripts/generated_docs.py" --tremor "$build/estimators/tremor" --root "$top" --write
