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
      # templates), and no optimisation can hide an access from the sanitizer.
      configure build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O0 -g" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g" \
        -DTREMOR_SANITIZE=address,undefined
      # Only what the selected tests run.
      cmake --build "$top/build-asan" -j "$jobs" --target test_segments test_environment_probe write_sample_run test_estimators \
        test_analysis test_lost_interval test_config test_counters test_inject_config tremor tremor_preload tremor_inject \
        bsp_demo io_app errors_app barrier_loop exit_time_finalize helper_thread sde_bsp fortran_mpif fortran_usempi fortran_f08 \
        inject_workload stand_in_profiler coverage_threads_app coverage_communicators_app coverage_arguments_app \
        finalize_shim
      # The ranks are built with the sanitizer and the drivers preload Tremor
      # into them only (test/integration/launch.py). Not here: the non-MPI
      # inertness test (it preloads into Python and sh, uninstrumented), the
      # accuracy tests (timing thresholds mean nothing at ASan's speed; in
      # cputime_work_4us the instrumented wrapper's ~20 us outweighs the 4 us
      # of compute it measures), the long runs (RSS bounds neither), the
      # 64-rank run (its point is the job's exit; 64 instrumented ranks need
      # gigabytes), UX and campaigns (shell launchers).
      (cd "$top/build-asan" && ctest --output-on-failure --timeout 600 --output-junit ctest-junit.xml \
        -R '^(segments|interpose|estimators|analysis|config|counters|injector|integration|coverage)\.' \
        -E 'inert_without_mpi_init|long_run|analysis_finds_planted|analysis_quiet_run|_work_4us|many_ranks') || status=1
      "$top/scripts/print-skips.py" "$top/build-asan/ctest-junit.xml"
      ;;
    tsan)
      echo "== sanitizers: ThreadSanitizer build (MPICH), threaded test"
      configure build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O0 -g" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g" \
        -DTREMOR_SANITIZE=thread
      cmake --build "$top/build-tsan" -j "$jobs" --target tremor_preload coverage_threads_app
      (cd "$top/build-tsan" && ctest --output-on-failure --timeout 600 -R '^coverage\.thread_level_') || status=1
      ;;
    fuzz | fuzz-build)
      echo "== sanitizers: libFuzzer harnesses (clang): replay, then a fixed exploration"
      configure build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DTREMOR_FUZZ=ON -DTREMOR_BUILD_TESTS=OFF "-DTREMOR_COMPONENTS=estimators;segments"
      cmake --build "$top/build-fuzz" -j "$jobs" --target fuzzers
      if [ "$pass" = fuzz ]; then
        (cd "$top/build-fuzz" && ctest --output-on-failure --timeout 900 -j "$jobs" -L fuzz) || status=1
      fi
      ;;
    *) echo "unknown pass '$pass' (asan, tsan, fuzz or fuzz-build)" >&2; exit 2 ;;
  esac
  echo "== sanitizers: $pass took ${SECONDS} s"
done
exit $status
