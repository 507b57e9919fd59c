#!/usr/bin/env bash
# Mutation check: applies each named mutant (test/mutants/*.patch, a small
# deliberate bug) alone with `git apply`, rebuilds, runs the CTest suite and
# prints a kill table ending in `killed K of N`. A mutant is killed when a
# test fails (a skip does not kill). Not part of CI: it rebuilds once per
# mutant; docs/reliability.md has the table and the time it took.
#
# usage: scripts/mutants.sh [MUTANT_NAME...]     (default: every patch)
#   TREMOR_MUTANTS_BUILD  build directory (default build-mutants, MPICH)
#   TREMOR_MUTANTS_TESTS  ctest -R regex of the suite (default: all)
#   TREMOR_MUTANTS_SKIP   ctest -E regex left out (default: the campaigns that run
#                         MPI jobs, the long runs and the UX tests, for time)
#   TREMOR_MUTANTS_JOBS   build jobs (default 2)
# Exit status: 0 when every mutant was killed, 1 when one survived, 2 when a
# patch no longer applies, a mutant does not build, or the suite fails
# without any mutant.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${TREMOR_MUTANTS_BUILD:-$top/build-mutants}
tests=${TREMOR_MUTANTS_TESTS:-.}
skip=${TREMOR_MUTANTS_SKIP:-'^campaigns\.(interference_short|kinds_short|scale_)|long_run|^ux\.'}
jobs=${TREMOR_MUTANTS_JOBS:-2}
logs=$build/mutant-logs
cd "$top"

patches=()
if [ $# -gt 0 ]; then
  for name in "$@"; do patches+=("test/mutants/${name%.patch}.patch"); done
else
  patches=(test/mutants/*.patch)
fi
for patch in "${patches[@]}"; do
  if ! git apply --check "$patch" 2>/dev/null; then
    echo "mutants: $patch no longer applies to this tree; update it (git apply --check $patch)" >&2
    git apply --check "$patch" || true
    exit 2
  fi
done

applied=""
revert() { if [ -n "$applied" ]; then git apply -R "$applied"; applied=""; fi; }
trap revert EXIT INT TERM

build_tree() {  # build_tree LOG
  cmake -S "$top" -B "$build" -DTREMOR_MPI=mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTREMOR_WERROR=ON \
    -DTREMOR_BUILD_BENCHMARKS=OFF >"$1" 2>&1 && cmake --build "$build" -j "$jobs" >>"$1" 2>&1
}

run_suite() {  # run_suite LOG: 0 when every test passed or skipped
  (cd "$build" && ctest --stop-on-failure --timeout 600 -R "$tests" -E "$skip" >"$1" 2>&1)
}

mkdir -p "$logs"
SECONDS=0
echo "== mutants: the suite without a mutant"
if ! build_tree "$logs/baseline-build.log"; then
  echo "mutants: the tree does not build without a mutant ($logs/baseline-build.log)" >&2
  exit 2
fi
if ! run_suite "$logs/baseline-tests.log"; then
  echo "mutants: the suite fails without a mutant ($logs/baseline-tests.log):" >&2
  grep -E '\*\*\*(Failed|Timeout|Exception)' "$logs/baseline-tests.log" >&2 || true
  exit 2
fi

rows=()
killed=0
status=0
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  description=$(sed -n 's/^Mutant: //p' "$patch" | head -1)
  echo "== mutant $name: $description"
  git apply "$patch"
  applied=$patch
  if ! build_tree "$logs/$name-build.log"; then
    echo "mutants: $name does not build ($logs/$name-build.log)" >&2
    revert
    exit 2
  fi
  if run_suite "$logs/$name-tests.log"; then
    verdict="SURVIVED"
    by="-"
    status=1
  else
    verdict="killed"
    by=$(grep -E '\*\*\*(Failed|Timeout|Exception)' "$logs/$name-tests.log" | head -1 |
         sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^ .]) *\.*\*\*\*(Failed|Timeout|Exception).*/\1/')
    killed=$((killed + 1))
  fi
  revert
  rows+=("$(printf '%-36s %-9s %s' "$name" "$verdict" "$by")")
  echo "   $verdict ${by}"
done
# Leave the build matching the tree.
build_tree "$logs/final-build.log" || true

echo
printf '%-36s %-9s %s\n' "mutant" "verdict" "first failing test"
for row in "${rows[@]}"; do echo "$row"; done
echo "time: ${SECONDS} s"
echo "killed $killed of ${#patches[@]}"
exit $status
