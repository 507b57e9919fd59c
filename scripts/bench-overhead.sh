#!/usr/bin/env bash
# Added cost per intercepted call: unwrapped, an empty PMPI wrapper (the
# floor), and Tremor with each counter source and spill setting. One
# process, best of 7.
# usage: scripts/bench-overhead.sh [build dir] (default build-mpich)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-mpich}
flavour=$(basename "$(ls "$build"/interpose/libtremor-*.so)" .so); flavour=${flavour#libtremor-}
case $flavour in
  openmpi) launch=(mpirun.openmpi --allow-run-as-root -n 1) ;;
  *) launch=(mpiexec.mpich -n 1) ;;
esac
app="$build/test/bench/call_cost"
out=$(mktemp -d)
run() { env TREMOR_OUTPUT_DIR="$out" TREMOR_REPORT=none TREMOR_LOG_LEVEL=error "$@" "${launch[@]}" "$app" 1000000 7; }
printf '%-28s %18s %14s\n' configuration "MPI_Send ns/call" "Barrier ns/call"
row() { local name=$1; shift; local r; r=$(run "$@"); printf '%-28s %18s %14s\n' "$name" \
  "$(awk '/send_proc_null_ns/{print $2}' <<<"$r")" "$(awk '/barrier_ns/{print $2}' <<<"$r")"; }
row "unwrapped" env
row "empty PMPI wrapper" env LD_PRELOAD="$build/test/bench/libempty_pmpi_wrapper.so"
row "tremor, thread CPU time" env LD_PRELOAD="$build/interpose/libtremor-$flavour.so" TREMOR_COUNTERS=cputime
# The crash-recovery spill's share of a boundary (default: one append per second).
row "  same, spill off" env LD_PRELOAD="$build/interpose/libtremor-$flavour.so" TREMOR_COUNTERS=cputime \
  TREMOR_SPILL_INTERVAL=off
row "  same, spill every boundary" env LD_PRELOAD="$build/interpose/libtremor-$flavour.so" TREMOR_COUNTERS=cputime \
  TREMOR_SPILL_INTERVAL=0
rm -rf "$out"
