#!/usr/bin/env bash
# Mutation check: applies each named mutant (test/mutants/*.patch, a small
# deliberate bug) alone with `git apply`, rebuilds, runs tests and prints a
# kill table ending in `killed K of N`. A mutant is killed when a test fails
# (a skip does not kill).
#
# Full mode rebuilds the whole tree per mutant and runs the CTest suite.
# --quick (run by CI after the MPICH pass) takes only the mutants whose patch
# has a line `Quick: TARGETS | CTEST_REGEX` (the unit and replay tests that
# kill it): it reuses an already built tree, rebuilds only TARGETS (`-` for
# none: a Python mutant) and runs only CTEST_REGEX, then rebuilds them once
# more without the mutant.
#
# usage: scripts/mutants.sh [--quick] [MUTANT_NAME...]     (default: every patch)
#   TREMOR_MUTANTS_BUILD  build directory (default build-mutants; --quick: build-mpich)
#   TREMOR_MUTANTS_TESTS  ctest -R regex of the full suite (default: all)
#   TREMOR_MUTANTS_SKIP   ctest -E regex left out of the full suite (default: the
#                         campaigns that run MPI jobs, the long runs and the UX tests)
#   TREMOR_MUTANTS_JOBS   build jobs (default: the CPUs)
# Exit status: 0 when every mutant was killed, 1 when one survived, 2 when a
# patch no longer applies, a mutant does not build, or the tests fail
# without any mutant.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
default_build=$top/build-mutants
[ "$quick" = 1 ] && default_build=$top/build-mpich
build=${TREMOR_MUTANTS_BUILD:-$default_build}
tests=${TREMOR_MUTANTS_TESTS:-.}
skip=${TREMOR_MUTANTS_SKIP:-'^campaigns\.(interference_short|kinds_short|scale_)|long_run|^ux\.'}
jobs=${TREMOR_MUTANTS_JOBS:-$(nproc)}
logs=$build/mutant-logs
cd "$top"

quick_line() { sed -n 's/^Quick: //p' "$1" | head -1; }  # "TARGETS | REGEX" or ""
quick_targets() { local t; t=$(quick_line "$1" | cut -d'|' -f1 | xargs); [ "$t" = - ] && t=""; echo "$t"; }
quick_regex() { quick_line "$1" | cut -d'|' -f2- | xargs; }

patches=()
if [ $# -gt 0 ]; then
  for name in "$@"; do patches+=("test/mutants/${name%.patch}.patch"); done
else
  for patch in test/mutants/*.patch; do
    if [ "$quick" = 0 ] || [ -n "$(quick_line "$patch")" ]; then patches+=("$patch"); fi
  done
fi
for patch in "${patches[@]}"; do
  if ! git apply --check "$patch" 2>/dev/null; then
    echo "mutants: $patch no longer applies to this tree; update it (git apply --check $patch)" >&2
    git apply --check "$patch" || true
    exit 2
  fi
  if [ "$quick" = 1 ] && [ -z "$(quick_regex "$patch")" ]; then
    echo "mutants: $patch has no 'Quick: TARGETS | CTEST_REGEX' line" >&2
    exit 2
  fi
done

applied=""
revert() { if [ -n "$applied" ]; then git apply -R "$applied"; applied=""; fi; }
trap revert EXIT INT TERM

build_tree() {  # build_tree LOG [TARGET...]
  local log=$1
  shift
  if [ "$quick" = 1 ]; then
    [ $# -eq 0 ] && return 0
    cmake --build "$build" -j "$jobs" --target "$@" >"$log" 2>&1
    return
  fi
  cmake -S "$top" -B "$build" -DTREMOR_MPI=mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTREMOR_WERROR=ON \
    -DTREMOR_BUILD_BENCHMARKS=OFF >"$log" 2>&1 && cmake --build "$build" -j "$jobs" >>"$log" 2>&1
}

run_tests() {  # run_tests LOG [REGEX]: 0 when every test passed or skipped
  if [ "$quick" = 1 ]; then
    (cd "$build" && ctest --no-tests=error --stop-on-failure --timeout 300 -R "$2" >"$1" 2>&1)
  else
    (cd "$build" && ctest --stop-on-failure --timeout 600 -R "$tests" -E "$skip" >"$1" 2>&1)
  fi
}

mkdir -p "$logs"
SECONDS=0
if [ "$quick" = 1 ]; then
  [ -f "$build/CMakeCache.txt" ] || { echo "mutants: --quick needs a built tree at $build" >&2; exit 2; }
  # The tests that kill the mutants must pass without one.
  regexes=()
  for patch in "${patches[@]}"; do regexes+=("$(quick_regex "$patch")"); done
  baseline=$(IFS='|'; echo "${regexes[*]}")
  echo "== mutants (quick): the killing tests without a mutant"
  if ! run_tests "$logs/baseline-tests.log" "$baseline"; then
    echo "mutants: the killing tests fail without a mutant ($logs/baseline-tests.log)" >&2
    grep -E '\*\*\*(Failed|Timeout|Exception)' "$logs/baseline-tests.log" >&2 || true
    exit 2
  fi
else
  echo "== mutants: the suite without a mutant"
  if ! build_tree "$logs/baseline-build.log"; then
    echo "mutants: the tree does not build without a mutant ($logs/baseline-build.log)" >&2
    exit 2
  fi
  if ! run_tests "$logs/baseline-tests.log"; then
    echo "mutants: the suite fails without a mutant ($logs/baseline-tests.log):" >&2
    grep -E '\*\*\*(Failed|Timeout|Exception)' "$logs/baseline-tests.log" >&2 || true
    exit 2
  fi
fi

rows=()
killed=0
status=0
touched=()
for patch in "${patches[@]}"; do
  name=$(basename "$patch" .patch)
  description=$(sed -n 's/^Mutant: //p' "$patch" | head -1)
  echo "== mutant $name: $description"
  git apply "$patch"
  applied=$patch
  targets=()
  if [ "$quick" = 1 ]; then
    read -r -a targets <<<"$(quick_targets "$patch")"
    touched+=("${targets[@]}")
  fi
  if ! build_tree "$logs/$name-build.log" "${targets[@]}"; then
    echo "mutants: $name does not build ($logs/$name-build.log)" >&2
    revert
    exit 2
  fi
  if run_tests "$logs/$name-tests.log" "$(quick_regex "$patch")"; then
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
if [ "$quick" = 1 ]; then
  if [ ${#touched[@]} -gt 0 ]; then
    read -r -a unique <<<"$(printf '%s\n' "${touched[@]}" | sort -u | xargs)"
    build_tree "$logs/final-build.log" "${unique[@]}" || { echo "mutants: the tree does not rebuild" >&2; exit 2; }
  fi
else
  build_tree "$logs/final-build.log" || true
fi

echo
printf '%-36s %-9s %s\n' "mutant" "verdict" "first failing test"
for row in "${rows[@]}"; do echo "$row"; done
echo "time: ${SECONDS} s"
echo "killed $killed of ${#patches[@]}"
exit $status
