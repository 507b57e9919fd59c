#!/usr/bin/env python3
"""Integration checks of libtremor-inject on inject_workload (run under MPI).

CTest sets LD_PRELOAD to the injector for this driver (the driver itself never
calls MPI_Init, so the library stays inert in it); baseline runs drop
LD_PRELOAD from the child's environment. In a sanitized build CTest names the
libraries in INJECT_CHECK_PRELOAD instead and only the ranks get them (see
test/integration/launch.py). Every TREMOR_* variable is cleared
and set explicitly per run. Usage:

  inject_check.py CHECK --mpiexec EXE [--flag F ...] --program WORKLOAD

CHECK is one of: count, timing, selection, window, slowdown, seed, badconfig,
stacked, threads, trace.
"""
import argparse
import csv
import glob
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from launch import environment_without_tremor, preloaded  # noqa: E402  (shared with the integration tests)
from tremor_testing import MachineLoadError, run_measured  # noqa: E402

PRELOAD = os.environ.get("INJECT_CHECK_PRELOAD") or os.environ.get("LD_PRELOAD", "")

RANKS = 2
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message)


def job(opts, program_args, settings, preload=True, command=None):
    env = environment_without_tremor("INJECT_CHECK_PRELOAD", "LD_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = PRELOAD
    env.update(settings)
    if command is None:
        command, env = preloaded([opts.mpiexec, *opts.flag, "-n", str(RANKS), opts.program, *program_args], env)
    return command, env


def run(opts, program_args, settings, preload=True, command=None):
    command, env = job(opts, program_args, settings, preload, command)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def run_with_load(opts, program_args, settings, preload=True):
    """run(), while the kernel's count of what the machine took from the ranks is sampled:
    (result, seconds the machine took from them)."""
    command, env = job(opts, program_args, settings, preload)
    result, load = run_measured(command, env, 120, [opts.program])
    try:
        return result, load.seconds()
    except MachineLoadError as error:
        check(False, f"the machine's share of the run: {error}")
        return result, float("nan")


def every_rank(logs, what):
    """The logs of a run: one per rank, or a failure (a run that logged nothing checks nothing)."""
    check(sorted(logs) == list(range(RANKS)), f"{what}: injector logs of ranks {sorted(logs)}, expected every rank")
    return logs


def read_logs(directory):
    """Returns {rank: [row dicts]} from every delay log in directory."""
    logs = {}
    for path in sorted(glob.glob(os.path.join(directory, "tremor-inject_*.csv"))):
        with open(path, newline="") as handle:
            lines = [line for line in handle if not line.startswith("#")]
        reader = csv.DictReader(lines)
        check(reader.fieldnames == ["rank", "sequence", "time_s", "call", "requested_us", "spent_us", "segment",
                                    "entered_s", "returned_s", "queued_entered_s", "queued_returned_s"],
              f"{path}: unexpected header {reader.fieldnames}")
        rows = list(reader)
        rank = int(os.path.basename(path).split("_r")[-1].split("_")[0])
        for row in rows:
            check(int(row["rank"]) == rank, f"{path}: row rank {row['rank']} != file rank {rank}")
        logs.setdefault(rank, []).extend(rows)
    return logs


def injecting(directory, **settings):
    base = {"TREMOR_OUTPUT_DIR": directory}
    base.update({f"TREMOR_INJECT_{k.upper()}": str(v) for k, v in settings.items()})
    return base


def expect_success(result, what):
    check(result.returncode == 0, f"{what}: exit code {result.returncode}, stderr: {result.stderr[-2000:]}")


def api_totals(stderr):
    """Parses the workload's 'api_records RANK COUNT SUM' lines (C API view)."""
    totals = {}
    for line in stderr.splitlines():
        if line.startswith("api_records "):
            _, rank, count, total = line.split()
            totals[int(rank)] = (int(count), float(total))
    return totals


def check_count(opts, work):
    # Eligible calls per rank in "mixed N": N Sendrecv + N Allreduce +
    # (N + 2) MPI-IO + (3N + 4) POSIX = 6N + 6.
    n, p = 300, 0.3
    eligible = 6 * n + 6
    result = run(opts, ["mixed", str(n), work], injecting(work, mean_us=200, sd_us=50, probability=p, seed=7))
    expect_success(result, "count run")
    logs = read_logs(work)
    check(sorted(logs) == list(range(RANKS)), f"expected one log per rank, got ranks {sorted(logs)}")
    api = api_totals(result.stderr)
    sigma = math.sqrt(eligible * p * (1 - p))
    for rank, rows in logs.items():
        count = len(rows)
        check(abs(count - eligible * p) <= 5 * sigma,
              f"rank {rank}: {count} injections, binomial expectation {eligible * p:.1f} +- {5 * sigma:.1f}")
        requested = [float(r["requested_us"]) for r in rows]
        spent = [float(r["spent_us"]) for r in rows]
        check(all(s >= q for q, s in zip(requested, spent)), f"rank {rank}: some spent < requested")
        check(all(q >= 0 for q in requested), f"rank {rank}: negative requested delay")
        sequences = [int(r["sequence"]) for r in rows]
        check(len(set(sequences)) == count and max(sequences) < eligible,
              f"rank {rank}: sequence numbers not unique or beyond {eligible} eligible calls")
        mean = sum(requested) / count
        check(abs(mean - 200.0) <= 5 * 50.0 / math.sqrt(count), f"rank {rank}: mean requested {mean:.1f} us != 200")
        # The C API (what the profiler reads) must agree with the file.
        check(rank in api, f"rank {rank}: C API not found by dlsym")
        if rank in api:
            check(api[rank][0] == count, f"rank {rank}: C API count {api[rank][0]} != log rows {count}")
            check(abs(api[rank][1] - sum(requested)) <= 0.001 * count + 1e-6,
                  f"rank {rank}: C API total {api[rank][1]:.3f} != logged total {sum(requested):.3f}")
        print(f"rank {rank}: {count} injections of {eligible} calls, requested {sum(requested) / 1e3:.1f} ms, "
              f"spent {sum(spent) / 1e3:.1f} ms")


def loop_seconds(result):
    for line in result.stdout.splitlines():
        if line.startswith("loop_seconds "):
            return float(line.split()[1])
    check(False, f"no loop_seconds in output: {result.stdout!r} {result.stderr[-1000:]!r}")
    return 0.0


def check_timing(opts, work):
    # "independent N": each rank makes N MPI_Send calls to MPI_PROC_NULL and
    # only then meets the other at a barrier, so the loop's wall time grows
    # by the critical path = the largest per-rank total of delays spent.
    # Tolerance: growth in [0.9 cp - 5 ms, 1.2 cp + 30 ms] (timer and wake-up
    # noise), widened by what the machine took from the ranks (the kernel's
    # count): from the injected run above, from the baseline below. One
    # baseline run and one injected run; a miss fails. A loop of barriers is
    # not used: there the rank that busy-polls while its partner sleeps loses
    # its core under load and inflates the growth up to 2x.
    n = 200
    baseline_run, baseline_machine_s = run_with_load(opts, ["independent", str(n)], {}, preload=False)
    expect_success(baseline_run, "baseline run")
    result, machine_s = run_with_load(opts, ["independent", str(n)],
                                      injecting(work, mean_us=3000, sd_us=1000, probability=0.3, calls="p2p",
                                                seed=11))
    expect_success(result, "timing run")
    logs = every_rank(read_logs(work), "timing run")
    critical_path = max((sum(float(r["spent_us"]) for r in rows) for rows in logs.values()), default=0.0) * 1e-6
    baseline = loop_seconds(baseline_run)
    growth = loop_seconds(result) - baseline
    low = 0.9 * critical_path - 0.005 - baseline_machine_s
    high = 1.2 * critical_path + 0.03 + machine_s
    print(f"baseline {baseline:.4f} s (the machine took {baseline_machine_s:.4f} s), growth {growth:.4f} s "
          f"(the machine took {machine_s:.4f} s), critical path {critical_path:.4f} s; band [{low:.4f}, {high:.4f}] s")
    check(critical_path > 0.1, f"too little injected to judge ({critical_path:.4f} s)")
    check(low <= growth <= high, f"wall-time growth {growth:.4f} s is not about the critical path "
          f"{critical_path:.4f} s (band [{low:.4f}, {high:.4f}] s)")


def calls_by_rank(logs):
    summary = {}
    for rank, rows in logs.items():
        for row in rows:
            summary.setdefault(rank, {}).setdefault(row["call"], 0)
            summary[rank][row["call"]] += 1
    return summary


def check_selection(opts, work):
    n = 50
    first = os.path.join(work, "collective_io")
    os.mkdir(first)
    result = run(opts, ["mixed", str(n), first],
                 injecting(first, mean_us=20, probability=1, ranks="1", calls="coll,mpiio"))
    expect_success(result, "selection run (coll,mpiio on rank 1)")
    summary = calls_by_rank(read_logs(first))
    check(summary.get(0, {}) == {}, f"rank 0 is not selected but was delayed: {summary.get(0)}")
    expected = {"MPI_Allreduce": n, "MPI_File_open": 1, "MPI_File_write_at": n, "MPI_File_close": 1}
    check(summary.get(1) == expected, f"rank 1: delayed {summary.get(1)}, expected {expected}")

    # POSIX only, rank 0 only: MPI-IO's own POSIX I/O must not be delayed.
    second = os.path.join(work, "posix")
    os.mkdir(second)
    result = run(opts, ["mixed", str(n), second],
                 injecting(second, mean_us=20, probability=1, ranks="0-0", calls="posix"))
    expect_success(result, "selection run (posix on rank 0)")
    summary = calls_by_rank(read_logs(second))
    expected = {"open": 1, "write": n, "pwrite": n, "close": 1, "fopen": 1, "fwrite": n, "fclose": 1}
    check(summary.get(0) == expected, f"rank 0: delayed {summary.get(0)}, expected {expected}")
    check(summary.get(1, {}) == {}, f"rank 1 is not selected but was delayed: {summary.get(1)}")


def check_window(opts, work):
    n, pause_ms, after, length = 60, 20, 0.4, 0.4
    result = run(opts, ["window", str(n), str(pause_ms)],
                 injecting(work, mean_us=100, probability=1, calls="coll", after_s=after, for_s=length))
    expect_success(result, "window run")
    logs = read_logs(work)
    for rank in range(RANKS):
        times = [float(r["time_s"]) for r in logs.get(rank, [])]
        check(5 <= len(times) <= n - 10, f"rank {rank}: {len(times)} delays inside the window of {n} barriers")
        check(all(after <= t < after + length for t in times),
              f"rank {rank}: delay outside [{after}, {after + length}) s: {min(times, default=0)}..{max(times, default=0)}")


def check_slowdown(opts, work):
    """A persistent slow rank: each barrier on rank 1 waits factor x the sleep before it, every time,
    whatever the probability; rank 0 is untouched. A window limits it like any delay."""
    n, pause_ms, factor = 40, 20, 0.5
    result = run(opts, ["window", str(n), str(pause_ms)],
                 injecting(work, slowdown=factor, probability=0, calls="coll", ranks="1"))
    expect_success(result, "slowdown run")
    logs = read_logs(work)
    check(not logs.get(0), f"rank 0 was delayed {len(logs.get(0, []))} times")
    barriers = [r for r in logs.get(1, []) if r["call"] == "MPI_Barrier"]
    check(len(barriers) >= n, f"rank 1: {len(barriers)} barrier delays for {n} barriers")
    # The time since the previous return is the sleep (>= pause) plus the loop's overhead.
    # Less what the previous sleep overshot (repaid: tens of µs).
    requested_ms = sorted(float(r["requested_us"]) / 1e3 for r in barriers[1:])
    median_ms = requested_ms[len(requested_ms) // 2] if requested_ms else 0.0
    check(0.98 * factor * pause_ms <= median_ms <= factor * pause_ms * 1.5,
          f"rank 1: median slowdown delay {median_ms:.2f} ms, expected about {factor * pause_ms} ms")
    for row in barriers:
        check(float(row["spent_us"]) >= 0.9 * float(row["requested_us"]),
              f"rank 1: spent {row['spent_us']} us of {row['requested_us']} requested")
    # At kHz rates: 4000 calls 25 µs apart. A wait of 12.5 µs at each would
    # sleep about 80 µs on a virtual machine (6 times the factor); the waits
    # are paid once they add up to 200 µs and an overshoot is repaid, so over
    # the loop rank 1 waits half its 0.1 s of code, in about 250 sleeps.
    # What is owed is half the loop's time outside the sleeps: on a loaded
    # machine a descheduled rank's gaps grow, and so does what it owes.
    busy = os.path.join(work, "busy")
    os.mkdir(busy)
    calls, gap_us = 4000, 25.0
    result = run(opts, ["spin", str(calls), str(gap_us)],
                 injecting(busy, slowdown=factor, probability=0, calls="p2p", ranks="1"))
    expect_success(result, "slowdown run at kHz rates")
    rows = read_logs(busy).get(1, [])
    spent_s = sum(float(r["spent_us"]) for r in rows) * 1e-6
    elapsed = {int(rank): float(seconds) for _, rank, seconds in
               (line.split() for line in result.stderr.splitlines() if line.startswith("spin_elapsed "))}
    check(1 in elapsed, "rank 1 at kHz rates: the workload did not print its loop time")
    code_s = elapsed.get(1, 0.0) - spent_s
    check(code_s >= calls * gap_us * 1e-6, f"rank 1 at kHz rates: {code_s:.4f} s of code for {calls} x {gap_us} µs")
    owed_s = factor * code_s
    check(0.9 * owed_s <= spent_s <= 1.3 * owed_s,
          f"rank 1 at kHz rates: {spent_s:.4f} s spent in {len(rows)} sleeps for {owed_s:.4f} s owed")
    check(len(rows) <= owed_s / 200e-6 + 5, f"rank 1 at kHz rates: {len(rows)} sleeps of at least 200 µs owed")
    windowed = os.path.join(work, "windowed")
    os.mkdir(windowed)
    after, length = 0.3, 0.3
    result = run(opts, ["window", str(n), str(pause_ms)],
                 injecting(windowed, slowdown=factor, probability=0, calls="coll", ranks="1", after_s=after,
                           for_s=length))
    expect_success(result, "windowed slowdown run")
    times = [float(r["time_s"]) for r in read_logs(windowed).get(1, [])]
    check(3 <= len(times) < n - 5, f"windowed slowdown: {len(times)} delays")
    check(all(after <= t < after + length for t in times), f"windowed slowdown: delay outside the window")


def delay_sequence(directory):
    return {rank: [(r["sequence"], r["call"], r["requested_us"]) for r in rows]
            for rank, rows in read_logs(directory).items()}


def check_seed(opts, work):
    runs = {}
    for name, seed in (("a", 42), ("b", 42), ("c", 43)):
        directory = os.path.join(work, name)
        os.mkdir(directory)
        result = run(opts, ["mixed", "100", directory],
                     injecting(directory, mean_us=50, sd_us=20, probability=0.5, seed=seed))
        expect_success(result, f"seed run {name}")
        runs[name] = delay_sequence(directory)
    check(all(len(runs["a"].get(rank, [])) > 0 for rank in range(RANKS)), "seed run a injected nothing")
    check(runs["a"] == runs["b"], "same seed gave different delays")
    check(runs["a"] != runs["c"], "different seeds gave identical delays")
    check(runs["a"][0] != runs["a"][1], "ranks 0 and 1 drew identical delays (engine not seeded by rank)")


def check_threads(opts, work):
    # MPI_Init_thread(MPI_THREAD_MULTIPLE), two threads per rank calling at
    # once: every call delayed exactly once, sequence numbers unique; the
    # writes to /dev/null beside the file's are not file I/O: never delayed.
    n = 200
    result = run(opts, ["threads", str(n), work], injecting(work, mean_us=5, probability=1))
    expect_success(result, "threads run")
    logs = read_logs(work)
    expected = {"MPI_Send": 2 * n, "write": 2 * n, "open": 2, "close": 2}
    for rank in range(RANKS):
        rows = logs.get(rank, [])
        calls = {}
        for row in rows:
            calls[row["call"]] = calls.get(row["call"], 0) + 1
        check(calls == expected, f"rank {rank}: delayed {calls}, expected {expected}")
        check(len({int(r["sequence"]) for r in rows}) == len(rows), f"rank {rank}: duplicate sequence numbers")


def check_trace(opts, work):
    """TREMOR_INJECT_TRACE=coll: every rank logs every collective, delayed or
    not, with its entry and return on one clock. A barrier cannot return on
    rank 0 before rank 1 entered it and slept its delay; the C API (the
    profiler's /injection) still sees the delays only."""
    n, pause_ms = 30, 5
    traced = os.path.join(work, "traced")
    os.mkdir(traced)
    result = run(opts, ["window", str(n), str(pause_ms)],
                 injecting(traced, mean_us=2000, sd_us=200, probability=1, calls="coll", ranks="1", trace="coll"))
    expect_success(result, "traced run")
    logs = read_logs(traced)
    barriers = {rank: [r for r in logs.get(rank, []) if r["call"] == "MPI_Barrier"] for rank in range(RANKS)}
    for rank in range(RANKS):
        check(len(barriers[rank]) >= n, f"rank {rank}: {len(barriers[rank])} barriers traced of {n}")
        for row in logs.get(rank, []):
            check(float(row["entered_s"]) <= float(row["returned_s"]), f"rank {rank}: returned before entering: {row}")
    for row in barriers[0]:
        check(float(row["spent_us"]) == 0 and int(row["sequence"]) == -1,
              f"rank 0 is not selected: a traced row only, got {row}")
    for row in barriers[1]:
        spent_s = float(row["spent_us"]) * 1e-6
        check(spent_s >= 1e-3 and int(row["sequence"]) >= 0, f"rank 1: every barrier delayed, got {row}")
        check(float(row["returned_s"]) - float(row["entered_s"]) >= spent_s,
              f"rank 1: returned before its delay was over: {row}")
    # The last n barriers of each rank are the workload's, in the same order.
    early = [(float(a["returned_s"]), float(b["entered_s"]) + float(b["spent_us"]) * 1e-6)
             for a, b in zip(barriers[0][-n:], barriers[1][-n:])]
    check(all(returned >= arrived - 1e-6 for returned, arrived in early),
          f"rank 0 left a barrier before rank 1 reached it: {[e for e in early if e[0] < e[1] - 1e-6][:3]}")
    # Traced rows stay out of the C API's count.
    mixed = os.path.join(work, "mixed")
    os.mkdir(mixed)
    result = run(opts, ["mixed", "40", mixed], injecting(mixed, mean_us=100, probability=0.3, seed=5, trace="coll"))
    expect_success(result, "traced mixed run")
    api = api_totals(result.stderr)
    for rank, rows in every_rank(read_logs(mixed), "traced mixed run").items():
        delayed = [r for r in rows if float(r["spent_us"]) > 0]
        check(len(rows) > len(delayed), f"rank {rank}: no traced row beside the {len(delayed)} delays")
        check(api.get(rank, (None,))[0] == len(delayed),
              f"rank {rank}: C API count {api.get(rank)} != {len(delayed)} delays logged")


def check_queued(opts, work):
    """The run-queue columns: with a busy loop beside each CPU the ranks wait
    for a CPU between their calls, and the log holds the kernel's count of it
    (schedstat): cumulative per rank, and at least a tenth of the busy time
    (the loops take about half of it). A kernel without schedstat fails: the
    tests' measure of the machine's share rests on it too."""
    if not os.path.exists("/proc/thread-self/schedstat"):
        check(False, "no /proc/thread-self/schedstat on this kernel")
        return
    n, busy_us = 400, 1000
    folder = os.path.join(work, "queued")
    os.mkdir(folder)
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)]
    try:
        result = run(opts, ["spin", str(n), str(busy_us)], injecting(folder, trace="p2p"))
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    expect_success(result, "run beside busy loops")
    for rank, rows in every_rank(read_logs(folder), "run beside busy loops").items():
        check(len(rows) >= n, f"rank {rank}: {len(rows)} sends traced of {n}")
        queued = [(float(r["queued_entered_s"]), float(r["queued_returned_s"])) for r in rows]
        check(all(a <= b for a, b in queued) and all(b <= c for (_, b), (c, _) in zip(queued, queued[1:])),
              f"rank {rank}: run-queue delays not cumulative: {queued[:5]}")
        waited = queued[-1][1] - queued[0][0]
        check(waited >= 0.1 * n * busy_us * 1e-6,
              f"rank {rank}: {waited:.4f} s in the run queue beside busy loops over {n * busy_us * 1e-6:.2f} s busy")


def check_stacked(opts, work):
    # LD_PRELOAD="<stand-in profiler> <injector>": the profiler's MPI_X calls
    # PMPI_X, which the injector receives. Every call must still be delayed
    # exactly once (p = 1), whichever layer got it, and nothing else.
    n = 30
    result = run(opts, ["mixed", str(n), work], injecting(work, mean_us=10, probability=1))
    expect_success(result, "stacked run")
    seen = [line.split() for line in result.stderr.splitlines() if line.startswith("stand_in_profiler ")]
    check(len(seen) == RANKS and all(int(fields[2]) == 3 * n for fields in seen),
          f"the stand-in profiler did not see its {3 * n} calls per rank: {seen}")
    expected = {"MPI_Sendrecv": n, "MPI_Allreduce": n, "MPI_File_open": 1, "MPI_File_write_at": n,
                "MPI_File_close": 1, "open": 1, "write": n, "pwrite": n, "close": 1, "fopen": 1, "fwrite": n,
                "fclose": 1}
    summary = calls_by_rank(read_logs(work))
    for rank in range(RANKS):
        check(summary.get(rank) == expected, f"rank {rank}: delayed {summary.get(rank)}, expected {expected}")


# One bad value per kind of parser (every variable's message is covered by
# the unit test "every bad value is named"): numbers, lists, keywords.
BAD_SETTINGS = [
    ("TREMOR_INJECT_MEAN_US", "fast"), ("TREMOR_INJECT_PROBABILITY", "1.5"),
    ("TREMOR_INJECT_RANKS", "3-1"), ("TREMOR_INJECT_MODE", "nap"), ("TREMOR_INJECT_FOR_S", "0"),
]


def check_badconfig(opts, work):
    program_args = ["mixed", "20", work, "3"]
    baseline = run(opts, program_args, {}, preload=False)
    check(baseline.returncode == 3, f"baseline exit code {baseline.returncode}")
    valid = injecting(work, mean_us=100, probability=1)
    for variable, value in BAD_SETTINGS:
        result = run(opts, program_args, {**valid, variable: value})
        messages = [line for line in result.stderr.splitlines() if "tremor-inject" in line]
        check(result.stdout == baseline.stdout, f"{variable}={value}: stdout changed: {result.stdout!r}")
        check(result.returncode == baseline.returncode, f"{variable}={value}: exit code {result.returncode}")
        check(len(messages) == 1 and variable in messages[0] and f"'{value}'" in messages[0],
              f"{variable}={value}: expected one message naming it, got {messages}")
        check(not glob.glob(os.path.join(work, "tremor-inject_*.csv")), f"{variable}={value}: a log was written")

    not_a_directory = os.path.join(work, "plain_file")
    open(not_a_directory, "w").close()
    result = run(opts, program_args, injecting(not_a_directory, mean_us=10, probability=0.1))
    messages = [line for line in result.stderr.splitlines() if "tremor-inject" in line]
    check(result.stdout == baseline.stdout and result.returncode == baseline.returncode,
          "unwritable TREMOR_OUTPUT_DIR changed the application's output or exit code")
    check(len(messages) == 1 and "TREMOR_OUTPUT_DIR" in messages[0], f"unwritable directory: messages {messages}")

    # A process that never calls MPI_Init: the wrappers only forward.
    sample = os.path.join(work, "sample.txt")
    with open(sample, "w") as handle:
        handle.write("inert\n" * 1000)
    result = run(opts, None, injecting(work, mean_us=100000, probability=1), command=["/bin/cat", sample])
    check(result.returncode == 0 and result.stdout == "inert\n" * 1000 and result.stderr == "",
          f"non-MPI process affected: rc {result.returncode}, stderr {result.stderr!r}")
    check(not glob.glob(os.path.join(work, "tremor-inject_*.csv")), "non-MPI process wrote a log")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=["count", "timing", "selection", "window", "slowdown", "seed", "badconfig",
                                          "stacked", "threads", "trace", "queued"])
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--flag", action="append", default=[])
    parser.add_argument("--program", required=True)
    opts = parser.parse_args()
    if "libtremor-inject" not in PRELOAD:
        print("LD_PRELOAD (or INJECT_CHECK_PRELOAD) must name libtremor-inject (set by CTest)")
        return 1
    with tempfile.TemporaryDirectory(prefix=f"tremor-inject-{opts.check}-") as work:
        globals()[f"check_{opts.check}"](opts, work)
    print("FAILED" if FAILURES else "PASSED", opts.check)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
