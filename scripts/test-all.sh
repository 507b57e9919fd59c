#!/usr/bin/env bash
# The one test command: installs dependencies, builds both MPI flavours with
# warnings as errors, and runs every test of each (CTest); then the sanitizer pass
# (scripts/test-sanitizers.sh: ASan+UBSan unit and integration tests, the
# threaded test under ThreadSanitizer, libFuzzer).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
status=0
for flavour in mpich openmpi; do
  echo "== $flavour: build"
  # Benchmarks and the unit and CLI tests of the MPI-free components do not
  # depend on the MPI: compile and run them once, in the MPICH pass.
  once=ON; [ "$flavour" = openmpi ] && once=OFF
  "$top/scripts/build.sh" "$flavour" -DTREMOR_WERROR=ON -DTREMOR_BUILD_BENCHMARKS=$once -DTREMOR_MPI_FREE_TESTS=$once
  echo "== $flavour: test"
  (cd "$top/build-$flavour" && ctest --output-on-failure --timeout 600 --output-junit ctest-junit.xml) || status=1
  "$top/scripts/print-skips.py" "$top/build-$flavour/ctest-junit.xml"
done
"$top/scripts/test-sanitizers.sh" asan tsan fuzz || status=1
exit $status
