#!/usr/bin/env bash
# Added cost per intercepted call: unwrapped, an empty PMPI wrapper (the
# floor), and Tremor with each counter source (thread CPU time, and a PAPI
# event: the SDE counter call_cost_sde registers), and with the crash-recovery
# spill off or written at every boundary. One process.
#   scripts/bench-overhead.sh [build dir]              wall time, best of 7 x 10^6 calls
#   scripts/bench-overhead.sh [build dir] --callgrind  instructions and system calls per
#       call (valgrind): the figures to trust on a loaded machine, where wall
#       time is noisy; a counter read with CPU time is one system call. Then
#       the instructions Tremor adds to one iteration of a bulk-synchronous
#       loop (test/bench/iteration_cost.c), per boundary and per non-boundary call.
# Default build dir: build-mpich.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-mpich
mode=wall
for arg in "$@"; do
  case $arg in
    --callgrind) mode=callgrind ;;
    *) build=$arg ;;
  esac
done
flavour=$(basename "$(ls "$build"/interpose/libtremor-*.so)" .so); flavour=${flavour#libtremor-}
case $flavour in
  openmpi) launch=(mpirun.openmpi --allow-run-as-root -n 1) ;;
  *) launch=(mpiexec.mpich -n 1) ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tremor="$build/interpose/libtremor-$flavour.so"
floor="$build/test/bench/libempty_pmpi_wrapper.so"
sde_event=sde:::TremorBench::work

if [[ $mode == wall ]]; then
  # run APP ENV...: the app's ns per call
  run() { local app=$1; shift; env TREMOR_OUTPUT_DIR="$out" TREMOR_REPORT=none TREMOR_LOG_LEVEL=error "$@" \
    "${launch[@]}" "$build/test/bench/$app" 1000000 7; }
  # Best of 7 wall and CPU time (CPU time is not inflated by descheduling).
  # "Spaced" is a barrier after a fixed ~30 us of arithmetic, timed alone
  # (median per call): with the CPU-time counter that boundary reads the
  # counter (back-to-back ones skip the read), and its caches are colder.
  # "Cold clock read" is one CLOCK_THREAD_CPUTIME_ID call after the same spin.
  printf '%-28s %10s %10s %10s %10s %12s %12s\n' configuration "Send ns" "Send CPU" "Barrier ns" "Barrier CPU" \
    "Spaced ns" "Cold clock"
  row() { local name=$1; shift; local r; r=$(run "$@"); printf '%-28s %10s %10s %10s %10s %12s %12s\n' "$name" \
    "$(awk '$1=="send_proc_null_ns"{print $2}' <<<"$r")" "$(awk '$1=="send_proc_null_cpu_ns"{print $2}' <<<"$r")" \
    "$(awk '$1=="barrier_ns"{print $2}' <<<"$r")" "$(awk '$1=="barrier_cpu_ns"{print $2}' <<<"$r")" \
    "$(awk '$1=="spaced_barrier_call_ns"{print $2}' <<<"$r")" "$(awk '$1=="spaced_cputime_read_ns"{print $2}' <<<"$r")"; }
  row "unwrapped" call_cost
  row "empty PMPI wrapper" call_cost LD_PRELOAD="$floor"
  row "tremor, thread oncpu" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=oncpu
  row "tremor, thread CPU time" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=cputime
  row "  same, clock every read" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=cputime_syscall
  # The crash-recovery spill's share of a boundary (default: one append per second).
  row "  same, spill off" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=cputime TREMOR_SPILL_INTERVAL=off
  row "  same, spill every boundary" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=cputime TREMOR_SPILL_INTERVAL=0
  row "unwrapped (SDE app)" call_cost_sde
  row "tremor, PAPI SDE event" call_cost_sde LD_PRELOAD="$tremor" TREMOR_COUNTERS=$sde_event
  exit 0
fi

# Callgrind: 200000 sends and 20000 barriers (past the stores' first chunk), each loop counted alone; the
# preload is passed through valgrind to the application only.
n=200000
measure() {
  local app=$1; shift
  local file="$out/cg.$RANDOM"
  env TREMOR_OUTPUT_DIR="$out" TREMOR_REPORT=none TREMOR_LOG_LEVEL=error "$@" "${launch[@]}" \
    valgrind --tool=callgrind --collect-systime=nsec --callgrind-out-file="$file" \
    --toggle-collect=send_loop --toggle-collect=barrier_loop "$build/test/bench/$app" $n 1 >/dev/null 2>&1
  # Inclusive Ir and system calls of each loop, per call.
  callgrind_annotate --inclusive=yes --show=Ir,sysCount "$file" 2>/dev/null | awk -v n=$n '
    function num(s) { gsub(/[,()%]/, "", s); return s + 0 }
    /:send_loop / { send = num($1) / n; send_sys = num($3) / n }
    /:barrier_loop / { barrier = num($1) / (n / 10); barrier_sys = num($3) / (n / 10) }
    END { printf "%.0f %.2f %.0f %.2f\n", send, send_sys, barrier, barrier_sys }'
}
printf '%-28s %14s %14s %16s %16s\n' configuration "Send Ir/call" "Send syscalls" "Barrier Ir/call" "Barrier syscalls"
row() {
  local name=$1; shift
  read -r send send_sys barrier barrier_sys < <(measure "$@")
  printf '%-28s %14s %14s %16s %16s\n' "$name" "$send" "$send_sys" "$barrier" "$barrier_sys"
}
row "unwrapped" call_cost
row "empty PMPI wrapper" call_cost LD_PRELOAD="$floor"
row "tremor, thread oncpu" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=oncpu
row "tremor, thread CPU time" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=cputime
row "  same, clock every read" call_cost LD_PRELOAD="$tremor" TREMOR_COUNTERS=cputime_syscall
row "unwrapped (SDE app)" call_cost_sde
row "tremor, PAPI SDE event" call_cost_sde LD_PRELOAD="$tremor" TREMOR_COUNTERS=$sde_event

# A bulk-synchronous loop (test/bench/iteration_cost.c), counted inside iteration_loop only: each
# iteration computes, makes E MPI_Sendrecv calls, closes the segment with MPI_Allreduce and rewrites a
# small file every W iterations. Added = Ir/iteration with the preload minus without.
iterations=20000
loop_ir() {  # E W ENV...: Ir per iteration
  local exchanges=$1 write_every=$2; shift 2
  local file="$out/cg.$RANDOM"
  env TREMOR_OUTPUT_DIR="$out" TREMOR_REPORT=none TREMOR_LOG_LEVEL=error "$@" "${launch[@]}" \
    valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect=iteration_loop \
    "$build/test/bench/iteration_cost" $iterations "$exchanges" "$write_every" "$out" >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$file" 2>/dev/null |
    awk -v n=$iterations '/:iteration_loop / { gsub(/,/, "", $1); printf "%.0f\n", $1 / n }'
}
echo
echo "BSP loop, $iterations iterations: compute, MPI_Sendrecv, MPI_Allreduce boundary, file rewrite every 50th"
printf '%-28s %14s %14s\n' configuration "Ir/iteration" "added"
base=$(loop_ir 1 50)
printf '%-28s %14s %14s\n' "unwrapped" "$base" 0
for config in "empty PMPI wrapper|LD_PRELOAD=$floor" "tremor, thread CPU time|LD_PRELOAD=$tremor"; do
  ir=$(loop_ir 1 50 "${config#*|}")
  printf '%-28s %14s %14s\n' "${config%%|*}" "$ir" $((ir - base))
done
# Per boundary: the loop without exchanges and writes; per non-boundary call: 5 exchanges against none.
boundary_base=$(loop_ir 0 0)
boundary=$(( $(loop_ir 0 0 LD_PRELOAD="$tremor") - boundary_base ))
exchange_base=$(loop_ir 5 0)
per_call=$(( ($(loop_ir 5 0 LD_PRELOAD="$tremor") - exchange_base - boundary) / 5 ))
echo "tremor, added per boundary (MPI_Allreduce alone):        $boundary Ir"
echo "tremor, added per non-boundary call (MPI_Sendrecv, 5 vs 0): $per_call Ir"
