#!/usr/bin/env python3
"""Many ranks of a small program with Tremor (issue 35): the job exits within
a bound and leaves a complete report, and TREMOR_DETAIL_RANKS keeps the
evenly spaced ranks it documents, each row holding its own rank's data.

usage: many_ranks.py --launcher CMD --np N --preload LIB --bound SECONDS --detail K -- BSP_DEMO
bsp_demo sleeps (-S) so that ranks outnumbering the cores do not fight over
them; rank LATE sleeps 2 s more in iteration 7 (bsp_demo -d; oversubscribed MPICH
ranks take up to a second per collective on 2 cores), so in that segment it
is the late rank, and its detail row is the one with the least time inside
MPI, by at least half the delay. The job is killed (and the test fails) past the bound.
"""
import argparse
import glob
import json
import os
import tempfile

import h5py
import numpy as np

from launch import (add_launch_arguments, environment_without_tremor, launched_program, mpi_command,
                    run_preloaded_bounded)
from robustness import finish  # same folder: the shared verdict

ITERATIONS = 12
DELAYED_ITERATION = 7
DELAY_MS = 2000
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(command, env, bound):
    result, _ = run_preloaded_bounded(command, env, bound)
    if result is None:
        check(False, f"the job did not exit within {bound} s")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bound", type=float, required=True)
    parser.add_argument("--detail", type=int, required=True)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    # The documented sampling: K evenly spaced ranks, rank 0 first.
    expected_detail = [i * opts.np // opts.detail for i in range(opts.detail)]
    late = expected_detail[len(expected_detail) // 2]
    program = launched_program(opts) + ["-S", "-n", str(ITERATIONS), "-u", "1000", "-b", "0", "-k", "0",
                                        "-d", f"{late}:{DELAYED_ITERATION}:{DELAY_MS}"]
    with tempfile.TemporaryDirectory(prefix="tremor-many-") as out:
        env = dict(environment_without_tremor(), LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out,
                   TREMOR_DETAIL_RANKS=str(opts.detail))
        result = run(mpi_command(opts.launcher, opts.np, program), env, opts.bound)
        if result is None:
            finish("many_ranks", failures)
        code, stdout, stderr, seconds = result
        print(f"{opts.np} ranks: job {seconds:.1f} s (bound {opts.bound:.0f} s), exit {code}")
        check(code == 0, f"exit status {code}: {stderr[-1500:]}")
        check(f"bsp_demo: {ITERATIONS} iterations on {opts.np} ranks" in stdout, f"application output: {stdout!r}")
        check("=== Tremor: interference report" in stderr, "no report on stderr")
        check(not glob.glob(os.path.join(out, "*.spill")), "spill files left after a complete run")
        runs = glob.glob(os.path.join(out, "*.h5"))
        if not check(len(runs) == 1 and os.path.exists(runs[0][:-3] + ".json"), f"run files: {os.listdir(out)}"):
            finish("many_ranks", failures)
        with open(runs[0][:-3] + ".json") as f:
            report = json.load(f)
        for field in ("world_size", "node_count", "segments", "interference_percent", "groups", "predictions",
                      "warnings", "diagnosis", "stragglers"):
            check(field in report, f"JSON report has no {field}")
        check(report.get("world_size") == opts.np, f"world_size {report.get('world_size')}")
        check(report.get("segments") == ITERATIONS + 1, f"segments {report.get('segments')}")
        with h5py.File(runs[0], "r") as f:
            check(int(f.attrs["world_size"]) == opts.np, "world_size attribute")
            check(f["ranks/rank"].shape[0] == opts.np, "ranks table size")
            check("analysis" in f, "no /analysis")
            detail = [int(r) for r in f["detail/ranks"][:]]
            check(detail == expected_detail, f"detail ranks {detail} != {expected_detail}")
            late_rank = int(f["segments/late_rank"][DELAYED_ITERATION])
            check(late_rank == late, f"late rank of segment {DELAYED_ITERATION} is {late_rank}, expected {late}")
            mpi = f["bins/mpi_time/value"][:][f["detail/mpi_time"][:]]
            row = detail.index(late) if late in detail else -1
            column = mpi[:, DELAYED_ITERATION]
            check(int(np.argmin(column)) == row and np.median(column) - column[row] > DELAY_MS / 2000,
                  f"segment {DELAYED_ITERATION}: the delayed rank's detail row does not hold the least MPI time "
                  f"({column})")
            print(f"detail ranks {detail}; late rank of segment {DELAYED_ITERATION}: {late_rank}; "
                  f"its MPI time {column[row] * 1e3:.1f} ms against a median {np.median(column) * 1e3:.1f} ms")
    finish("many_ranks", failures)


if __name__ == "__main__":
    main()
