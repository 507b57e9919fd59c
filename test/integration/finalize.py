#!/usr/bin/env python3
"""The end-of-run gather and its watchdog (issue 35), with a stand-in library
stacked after Tremor (finalize_shim.c) that sees Tremor's own MPI traffic.

usage: finalize.py --case CASE --launcher CMD --np N --preload LIB --shim LIB --tremor TREMOR
                   [--sizes 1,2] -- BSP_DEMO
CASE:
  count     the collectives of the end-of-run gather, counted by the shim on
            every rank, are the same for every rank, every process count in
            --sizes and 6 or 2001 iterations (no growth with ranks, metrics or
            segments), at most 6, with no point-to-point message
  stall     rank 0's gatherv never completes (the shim hides it): with
            TREMOR_FINALIZE_LIMIT=3 the job still exits 0 well within the
            limit plus its grace, rank 0 says so in one line, no run file is
            written, every rank keeps its spill and `tremor analyze --recover`
            rebuilds the whole run from them
  outcome   rank 1 never sees the root's outcome: the run file and report are
            complete, the job exits, rank 1 keeps its spill, the others not
  slow      rank 1 sleeps 2 s before its gatherv, under a 30 s limit: a
            complete run, no watchdog line, no spill left
"""
import argparse
import glob
import os
import subprocess
import tempfile

import h5py

from launch import (add_launch_arguments, environment_without_tremor, launched_program, mpi_command,
                    run_preloaded_bounded)
from robustness import finish  # same folder: the shared verdict

JOB_TIMEOUT_S = 90
STOPPED = "end-of-run work stopped at TREMOR_FINALIZE_LIMIT="
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(command, env, timeout=JOB_TIMEOUT_S):
    """(returncode, stdout, stderr, seconds); the whole process group is
    killed on a timeout, so a hung job leaves no rank behind."""
    result, err = run_preloaded_bounded(command, env, timeout)
    if result is None:
        check(False, f"the job did not exit within {timeout} s (it hangs): {' '.join(command)}\n{err[-1500:]}")
    return result


def files(out, pattern):
    return sorted(glob.glob(os.path.join(out, pattern)))


def complete_run(out, iterations, np):
    h5 = files(out, "*.h5")
    if not check(len(h5) == 1 and len(files(out, "*.json")) == 1, f"expected one run file and JSON, found {h5}"):
        return
    with h5py.File(h5[0], "r") as f:
        check(int(f.attrs["world_size"]) == np, f"world_size {f.attrs['world_size']} != {np}")
        check(f["segments/duration_s"].shape[0] == iterations + 1, "segment count wrong")
        check("analysis" in f, "no /analysis in the run file")


def count_case(opts, base):
    seen = {}
    for np in [int(n) for n in opts.sizes.split(",")]:
        for iterations in (6, 2001):
            with tempfile.TemporaryDirectory(prefix="tremor-finalize-") as out:
                env = dict(base, LD_PRELOAD=f"{opts.preload} {opts.shim}", TREMOR_OUTPUT_DIR=out,
                           FINALIZE_SHIM_COUNT_DIR=out)
                program = launched_program(opts) + ["-n", str(iterations), "-u", "50", "-b", "64", "-k", "0", "-q"]
                result = run(mpi_command(opts.launcher, np, program), env)
                if result is None or not check(result[0] == 0, f"exit {result[0]}: {result[2][-800:]}"):
                    continue
                complete_run(out, iterations, np)
                counts = {}
                for r in range(np):
                    path = os.path.join(out, f"count.{r}")
                    if check(os.path.exists(path), f"rank {r} wrote no count"):
                        counts[r] = tuple(int(x) for x in open(path).read().split())
                print(f"{np} processes, {iterations + 1} segments: (collectives, messages) per rank {counts}")
                for r, count in counts.items():
                    seen.setdefault(count, []).append((np, iterations, r))
    check(len(seen) == 1, f"the gather's size depends on the run: {seen}")
    for (collectives, messages) in seen:
        check(1 <= collectives <= 6, f"{collectives} collectives in the end-of-run gather, expected at most 6")
        check(messages == 0, f"{messages} point-to-point messages in the end-of-run gather, expected none")


def watchdog_case(opts, base):
    iterations = 40
    with tempfile.TemporaryDirectory(prefix="tremor-finalize-") as out:
        env = dict(base, LD_PRELOAD=f"{opts.preload} {opts.shim}", TREMOR_OUTPUT_DIR=out, TREMOR_SPILL_INTERVAL="0")
        limit = 3.0 if opts.case != "slow" else 30.0
        env["TREMOR_FINALIZE_LIMIT"] = str(limit)
        if opts.case == "stall":
            env["FINALIZE_SHIM_STALL"] = "0:Igatherv"
        elif opts.case == "outcome":
            env["FINALIZE_SHIM_STALL"] = "1:Ibcast"
        else:
            env["FINALIZE_SHIM_DELAY"] = "1:Igatherv:2"
        program = launched_program(opts) + ["-n", str(iterations), "-u", "200", "-b", "64", "-k", "0", "-q"]
        plain = run(mpi_command(opts.launcher, opts.np, program), base)
        result = run(mpi_command(opts.launcher, opts.np, program), env)
        if result is None or plain is None:
            return
        code, stdout, stderr, seconds = result
        check((code, stdout) == (plain[0], plain[1]), f"the application's exit or output changed: {code} {stdout!r}")
        stopped = [line for line in stderr.splitlines() if STOPPED in line]
        spills = files(out, "*.spill")
        print(f"{opts.case}: job {seconds:.1f} s (without Tremor {plain[3]:.1f} s); {len(spills)} spill files; "
              f"watchdog lines: {stopped}")
        if opts.case == "stall":
            # Every rank waits at most limit + grace (limit / 10 + 2 s) once all
            # reached MPI_Finalize; the rest is the launch and the run itself.
            check(seconds < plain[3] + limit + limit / 10 + 2 + 20, f"the job took {seconds:.1f} s")
            check(len(stopped) == 1 and "no run file was written" in stopped[0] and "--recover" in stopped[0],
                  f"expected one line saying the work stopped and how to recover, got {stopped}")
            check(not files(out, "*.h5") and not files(out, "*.json"), "a run file was left although the gather stopped")
            if check(len(spills) == opts.np, f"expected {opts.np} kept spill files, found {spills}"):
                recovered = subprocess.run([opts.tremor, "analyze", "--recover", spills[0]], capture_output=True,
                                           text=True, timeout=120)
                check(recovered.returncode == 0 and "PARTIAL RUN" in recovered.stdout,
                      f"recover failed: {recovered.stdout[:300]} {recovered.stderr[:300]}")
                rebuilt = files(out, "*-recovered-*.h5")
                if check(len(rebuilt) == 1, f"expected one recovered file, found {rebuilt}"):
                    with h5py.File(rebuilt[0], "r") as f:
                        segments = f["segments/duration_s"].shape[0]
                        check(segments == iterations + 1, f"{segments} segments recovered, expected {iterations + 1}")
        elif opts.case == "outcome":
            check(not stopped, f"the root finished in time but said it stopped: {stopped}")
            complete_run(out, iterations, opts.np)
            check([os.path.basename(s).split(".")[-2] for s in spills] == ["r1"],
                  f"only rank 1, which never saw the outcome, should keep its spill: {spills}")
        else:
            check(not stopped, f"a run within the limit was stopped: {stopped}")
            check(seconds >= plain[3] + 1.5, f"the planted 2 s delay did not happen (job {seconds:.1f} s)")
            complete_run(out, iterations, opts.np)
            check(not spills, f"spill files left after a complete run: {spills}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=["count", "stall", "outcome", "slow"])
    parser.add_argument("--shim", required=True)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--sizes", default="1,2")
    add_launch_arguments(parser)
    opts = parser.parse_args()
    base = environment_without_tremor("FINALIZE_SHIM_COUNT_DIR", "FINALIZE_SHIM_DELAY", "FINALIZE_SHIM_STALL")
    if opts.case == "count":
        count_case(opts, base)
    else:
        watchdog_case(opts, base)
    finish(opts.case, failures)


if __name__ == "__main__":
    main()
