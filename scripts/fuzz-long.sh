#!/usr/bin/env bash
# Long fuzzing from random seeds, outside CI (the CI's fuzz pass is short and
# deterministic: scripts/test-sanitizers.sh fuzz). Builds build-fuzz, then runs
# each named harness (default: all) for SECONDS, one after another, from the
# harness's seeds and past faults. Each run prints its seed; a fault in our
# code fails the run and stays in build-fuzz/fuzz-long/<harness>/artifacts/
# (rerun it: build-fuzz/test/fuzz/fuzz_<harness> FILE). Once fixed, copy it
# into test/fuzz/regressions/<harness>/ so that the CI replays it.
# usage: scripts/fuzz-long.sh [-s SECONDS] [-S SEED] [harness...]
#   harnesses: run_file compare sample config inject_config spill   (default 600 s each)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=600
seed=()
while getopts "s:S:" option; do
  case $option in
    s) seconds=$OPTARG ;;
    S) seed=(--seed "$OPTARG") ;;
    *) sed -n '2,11p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(run_file compare sample config inject_config spill)

"$top/scripts/test-sanitizers.sh" fuzz-build
build=$top/build-fuzz
export ASAN_OPTIONS=allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$top/test/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for harness in "${harnesses[@]}"; do
  judge=()
  case $harness in
    run_file) judge=(--hdf5-tool "$build/estimators/tremor" --tool-command analyze) ;;
    compare) judge=(--hdf5-tool "$build/estimators/tremor" --tool-command compare) ;;
  esac
  out=$build/fuzz-long/$harness
  mkdir -p "$out"
  echo "== $harness: ${seconds} s"
  /usr/bin/python3 "$top/test/fuzz/run_fuzzer.py" explore --harness "$build/test/fuzz/fuzz_$harness" \
    --inputs "$top/test/fuzz/corpus/$harness" "$top/test/fuzz/regressions/$harness" \
    --work "$out/work" --artifacts "$out/artifacts" --log "$out/libfuzzer.log" --timeout 10 \
    --seconds "$seconds" "${seed[@]}" "${judge[@]}" || status=1
done
exit $status
