#!/usr/bin/env bash
# The one test command: installs dependencies, builds both MPI flavours with
# warnings as errors and runs every test of each (CTest; the accuracy checks
# run on the recorded replays, test/data/replays), then the quick mutation
# check (scripts/mutants.sh --quick: each known-wrong implementation must turn
# a test red), then the sanitizer pass (scripts/test-sanitizers.sh: ASan+UBSan
# unit and integration tests, the threaded test under ThreadSanitizer,
# libFuzzer). A test may skip only for a missing capability
# (test/common/capabilities.py); any other skip fails (scripts/print-skips.py).
# Ends with the time each stage took.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
status=0
stages=()
timed() {  # timed NAME COMMAND...: runs it, notes its time, a failure sets status
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  "$@" || { echo "== $name FAILED"; status=1; }
  stages+=("$(printf '%-28s %5d s' "$name" $((SECONDS - start)))")
}
# Tests that judge no time run two at a time: the unit tests, the CLI tests on
# files (hostile input, many groups), the re-analysis of the recorded replays,
# and the long runs (one process; their bound is on memory). Every test whose
# check reads a clock runs alone, so that the runs it judges have the machine
# to themselves.
concurrent_tests='^((segments|estimators|analysis|config|reference|repository|docs|interpose)\..*|campaigns\.replay.*'
concurrent_tests+='|integration\.long_run_.*|hostile\.(analyze|compare|plot|fit|predict|config)'
concurrent_tests+='|ux\.(tremor_run_help|tremor_plot_command|many_groups_page|many_groups_compare))$'
flavour_tests() {  # flavour_tests FLAVOUR: CTest, then the skips
  local build=$top/build-$1 rc=0
  rm -f "$build"/ctest-junit-concurrent.xml "$build"/ctest-junit.xml "$build"/replay-table-*.txt
  (cd "$build" && ctest --output-on-failure --timeout 600 -j 2 -R "$concurrent_tests" \
    --output-junit ctest-junit-concurrent.xml) || rc=1
  (cd "$build" && ctest --output-on-failure --no-tests=error --timeout 600 -E "$concurrent_tests" \
    --output-junit ctest-junit.xml) || rc=1
  # The replay check's table (CTest keeps only a passing test's first kilobyte).
  for table in "$build"/replay-table-*.txt; do
    [ -f "$table" ] || continue
    echo "== replays: $(basename "$table" .txt | sed 's/^replay-table-//')"
    cat "$table"
  done
  for junit in "$build"/ctest-junit-concurrent.xml "$build"/ctest-junit.xml; do
    [ -f "$junit" ] || continue
    "$top/scripts/print-skips.py" "$junit" || rc=1
  done
  return $rc
}

timed "dependencies" "$top/scripts/install-deps.sh" --tests
for flavour in mpich openmpi; do
  # Benchmarks and the unit and CLI tests of the MPI-free components do not
  # depend on the MPI: compile and run them once, in the MPICH pass.
  once=ON; [ "$flavour" = openmpi ] && once=OFF
  # Line tables only (-g1): a fifth less compile time than -g; backtraces and
  # sanitizer reports keep their files and lines.
  timed "$flavour: build" "$top/scripts/build.sh" "$flavour" -DTREMOR_WERROR=ON \
    -DTREMOR_BUILD_TESTS=ON -DTREMOR_BUILD_BENCHMARKS=$once -DTREMOR_MPI_FREE_TESTS=$once \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  timed "$flavour: tests" flavour_tests "$flavour"
  if [ "$flavour" = mpich ]; then
    timed "mutants (quick)" "$top/scripts/mutants.sh" --quick
  fi
done
for pass in asan tsan fuzz; do
  timed "sanitizers: $pass" "$top/scripts/test-sanitizers.sh" "$pass"
done
echo "== time per stage"
printf '  %s\n' "${stages[@]}"
echo "== total ${SECONDS} s"
exit $status
