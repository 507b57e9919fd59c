#!/usr/bin/env bash
# The sanitizer pass of the CI (issue 10), MPICH only:
#   build-asan  GCC, ASan+UBSan: the unit, CLI, injector, integration and coverage tests
#   build-tsan  GCC, ThreadSanitizer: the threaded coverage test (every thread level)
#   build-fuzz  clang, libFuzzer+ASan+UBSan: each harness replays its seeds and
#               past faults, then fuzzes from a fixed seed for a fixed number
#               of executions (deterministic; scripts/fuzz-long.sh fuzzes long)
# Every sanitizer report is fatal (-fno-sanitize-recover, halt_on_error).
# usage: scripts/test-sanitizers.sh [asan] [tsan] [fuzz] [fuzz-build]   (default: the first three)
# fuzz-build only builds build-fuzz (for scripts/fuzz-long.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
passes=("$@")
[ ${#passes[@]} -eq 0 ] && passes=(asan tsan fuzz)
jobs=$(nproc)
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# HDF5 1.10 leaks on its own error paths when it reads corrupted files (the
# reader's tests and the fuzzer feed it many); no leak of ours is suppressed.
export LSAN_OPTIONS=suppressions=$top/test/lsan.supp:print_suppressions=0
status=0

configure() {  # configure DIR [cmake arguments...]
  local dir=$1
  shift
  cmake -S "$top" -B "$top/$dir" -DTREMOR_MPI=mpich -DTREMOR_BUILD_BENCHMARKS=OFF "$@" >/dev/null
}

for pass in "${passes[@]}"; do
  SECONDS=0
  case $pass in
    asan)
      echo "== sanitizers: ASan+UBSan build (MPICH), unit, CLI, injector, integration and coverage tests"
      # -O0: three times quicker to compile than -O1 here (Catch2 and Boost.Math
      # templates), and no optimisation can hide an access from the sanitizer;
      # -g1 (line tables): reports keep their files and lines, for less compile time.
      configure build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
        -DTREMOR_SANITIZE=address,undefined
      # Only what the selected tests run.
      cmake --build "$top/build-asan" -j "$jobs" --target test_segments test_environment_probe write_sample_run test_estimators \
        test_analysis test_lost_interval test_config test_counters test_inject_config tremor tremor_preload tremor_inject \
        bsp_demo io_app errors_app barrier_loop exit_time_finalize helper_thread sde_bsp fortran_mpif fortran_usempi fortran_f08 \
        inject_workload stand_in_profiler coverage_threads_app coverage_communicators_app coverage_arguments_app \
        finalize_shim tremor_preload_small_elements
      # The ranks are built with the sanitizer and the drivers preload Tremor
      # into them only (test/integration/launch.py). Every unit test runs; of
      # the MPI tests, those that take a distinct path through the preloaded
      # library (recording, gather, spill and recovery, finalize, Fortran,
      # threads, communicators, hostile settings, the injector's parsing,
      # logging and stacking). Not here: tests whose point is a timing band
      # (diagnosis, work, planted delays, the injector's wall-time and
      # binomial checks: ASan's 2-20x slowdown is the machine's share, not
      # Tremor's), the long runs and the 64-rank run (memory and time, not
      # access errors), fake nodes and affinity, the non-MPI inertness test
      # (it preloads into Python and sh, uninstrumented), UX and campaigns.
      mpi_tests='integration\.(exit_time_finalize.*|bsp_boundaries_and_bytes|subcommunicator_no_boundaries'
      mpi_tests+='|posix_and_mpiio_counts|bad_configuration_values|stacked_with_injector|injector_spares_tremor_io'
      mpi_tests+='|fortran_.*|environment_matches_machine|error_semantics_unchanged|bad_output_directory'
      mpi_tests+='|hostile_strings_valid_json|recovery_.*|finalize_.*|helper_thread_not_interference|gather_.*)'
      mpi_tests+='|coverage\..*|injector\.(config|count|badconfig|threads|trace|stacked)'
      # The unit tests start no MPI job and time nothing: two at a time. Not
      # here: the Monte Carlo coverage checks (thousands of replicates of the
      # code the other unit tests run once, 2.5 min under ASan) and the
      # re-analysis of the recorded replays (2.5 min; the fuzzers feed the
      # same reader and analysis damaged files).
      asan_unit_skip='^(estimators\.interval_coverage|estimators\.unit\.prediction intervals for one run cover it.*'
      asan_unit_skip+='|analysis\.short_report_replays)$'
      (cd "$top/build-asan" && ctest --output-on-failure --no-tests=error --timeout 600 -j 2 \
        --output-junit ctest-junit-unit.xml -R "^(segments|interpose|estimators|analysis|config)\..*\$" \
        -E "$asan_unit_skip") || status=1
      (cd "$top/build-asan" && ctest --output-on-failure --no-tests=error --timeout 600 --output-junit ctest-junit.xml \
        -R "^(counters\..*|$mpi_tests)\$") || status=1
      for junit in ctest-junit-unit.xml ctest-junit.xml; do
        "$top/scripts/print-skips.py" "$top/build-asan/$junit" || status=1
      done
      ;;
    tsan)
      echo "== sanitizers: ThreadSanitizer build (MPICH), threaded test"
      configure build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
        -DTREMOR_SANITIZE=thread
      cmake --build "$top/build-tsan" -j "$jobs" --target tremor_preload coverage_threads_app
      (cd "$top/build-tsan" && ctest --output-on-failure --no-tests=error --timeout 600 -R '^coverage\.thread_level_') || status=1
      ;;
    fuzz | fuzz-build)
      echo "== sanitizers: libFuzzer harnesses (clang): replay, then a fixed exploration"
      # Line tables only (-g1): crash reports keep their files and lines.
      configure build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
        -DTREMOR_FUZZ=ON -DTREMOR_BUILD_TESTS=OFF "-DTREMOR_COMPONENTS=estimators;segments"
      cmake --build "$top/build-fuzz" -j "$jobs" --target fuzzers
      if [ "$pass" = fuzz ]; then
        (cd "$top/build-fuzz" && ctest --output-on-failure --no-tests=error --timeout 900 -j "$jobs" -L fuzz) || status=1
      fi
      ;;
    *) echo "unknown pass '$pass' (asan, tsan, fuzz or fuzz-build)" >&2; exit 2 ;;
  esac
  echo "== sanitizers: $pass took ${SECONDS} s"
done
exit $status
