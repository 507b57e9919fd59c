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
flavour_tests() {  # flavour_tests FLAVOUR: CTest, then the skips
  local junit=$top/build-$1/ctest-junit.xml rc=0
  (cd "$top/build-$1" && ctest --output-on-failure --no-tests=error --timeout 600 --output-junit ctest-junit.xml) || rc=1
  "$top/scripts/print-skips.py" "$junit" || rc=1
  return $rc
}

timed "dependencies" "$top/scripts/install-deps.sh"
for flavour in mpich openmpi; do
  # Benchmarks and the unit and CLI tests of the MPI-free components do not
  # depend on the MPI: compile and run them once, in the MPICH pass.
  once=ON; [ "$flavour" = openmpi ] && once=OFF
  timed "$flavour: build" "$top/scripts/build.sh" "$flavour" -DTREMOR_WERROR=ON \
    -DTREMOR_BUILD_BENCHMARKS=$once -DTREMOR_MPI_FREE_TESTS=$once
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
