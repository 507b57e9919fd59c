#!/usr/bin/env bash
# The main job on the bundled demo: installs dependencies, builds (MPICH),
# runs the bulk-synchronous demo under mpiexec.mpich with Tremor preloaded and
# the injector adding Gaussian delays (15 +- 5 ms, 10 % of calls) to rank 1's
# checkpoint I/O, prints Tremor's end-of-run report, then one line setting
# the delays the injector logged against Tremor's estimate.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
build="$top/build-mpich"
# Only what the demo runs: the profiler, the injector, the `tremor` tool and
# the demo program. A new build folder is configured without the tests (their
# packages come with `install-deps.sh --tests`); an existing one keeps its
# configuration. The build tool prints its progress.
configure=()
[ -f "$build/CMakeCache.txt" ] || configure=(-DTREMOR_BUILD_TESTS=OFF -DTREMOR_BUILD_BENCHMARKS=OFF)
echo "== building the profiler, the injector, the tremor tool and the demo program (MPICH) in $build"
TREMOR_TARGETS="tremor_preload tremor_inject tremor bsp_demo" "$top/scripts/build.sh" mpich "${configure[@]}"
# A folder per run: the truth is read from the injector's logs of this run only.
out="${TREMOR_OUTPUT_DIR:-$top/demo-output}/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
echo "== bsp_demo on 2 MPICH processes, delays injected into rank 1's checkpoint I/O (output in $out)"
env TREMOR_OUTPUT_DIR="$out" \
    TREMOR_INJECT_MEAN_US=15000 TREMOR_INJECT_SD_US=5000 TREMOR_INJECT_PROBABILITY=0.1 \
    TREMOR_INJECT_CALLS=posix TREMOR_INJECT_RANKS=1 TREMOR_INJECT_SEED=7 TREMOR_INJECT_TRACE=coll \
    LD_PRELOAD="$build/interpose/libtremor-mpich.so $build/injector/libtremor-inject-mpich.so" \
    mpiexec.mpich -n 2 "$build/test/integration/bsp_demo" -n 300 -u 2000 -k 10 -t
run_file=$(ls "$out"/*.h5)
/usr/bin/python3 "$top/scripts/demo_truth.py" --tremor "$build/estimators/tremor" "$run_file"
