#!/usr/bin/env python3
"""Ranks taking turns on the CPUs, detected through their affinity.

usage: taking_turns.py --launcher CMD --np 2 --preload LIB -- PROGRAM ARGS...
The same tiny run twice: with the launcher confined to one CPU (taskset, so
every rank's affinity is that CPU and the ranks take turns on it) the report
says the ranks take turns (primary.taking_turns) and /environment holds the
affinity that was set; with every CPU of the machine (at least as many as
ranks) it does not. The truth is the affinity this driver sets, read back
with os.sched_getaffinity, never the report. Skipped (77) where the machine
has fewer CPUs than ranks (capability few-cores): the second run would take
turns too.
"""
import argparse
import glob
import json
import os
import sys
import tempfile

import h5py

from launch import add_launch_arguments, launched_program, mpi_command, run_preloaded

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from tremor_testing import CheckFailed, check, skip_for  # noqa: E402


def run(opts, program, prefix):
    with tempfile.TemporaryDirectory(prefix="tremor-turns-") as out:
        env = dict(os.environ, TREMOR_OUTPUT_DIR=out, LD_PRELOAD=opts.preload, TREMOR_REPORT="none",
                   TREMOR_COUNTERS="cputime")
        result = run_preloaded(prefix + mpi_command(opts.launcher, opts.np, program), env, timeout=120)
        check(result.returncode == 0, f"{' '.join(result.args)} exited with {result.returncode}: "
              f"{result.stderr[-2000:]}")
        files = glob.glob(os.path.join(out, "*.h5"))
        check(len(files) == 1, f"one run file, found {files}")
        with h5py.File(files[0], "r") as h5:
            report = json.loads(h5["analysis/report_json"][()])
            affinities = [a.decode() if isinstance(a, bytes) else str(a) for a in h5["environment/ranks/affinity"][:]] \
                if "environment/ranks/affinity" in h5 else []
        return report, affinities


def main():
    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    opts = parser.parse_args()
    program = launched_program(opts)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < opts.np:
        skip_for("few-cores", f"{len(cpus)} CPU(s) for {opts.np} ranks: no run here where the ranks do not take turns")
    try:
        pinned, affinities = run(opts, program, ["taskset", "-c", str(cpus[0])])
        print(f"confined to CPU {cpus[0]}: taking_turns {pinned['primary']['taking_turns']}, affinities {affinities}")
        check(affinities == [str(cpus[0])] * opts.np, f"every rank's affinity is CPU {cpus[0]}: {affinities}")
        check(pinned["primary"]["taking_turns"], "ranks confined to one CPU take turns on it")
        spread, affinities = run(opts, program, [])
        print(f"on {len(cpus)} CPUs: taking_turns {spread['primary']['taking_turns']}, affinities {affinities}")
        check(not spread["primary"]["taking_turns"], f"{opts.np} ranks on {len(cpus)} CPUs do not take turns")
    except CheckFailed as error:
        print(f"CHECK FAILED: {error}")
        return 1
    print("taking turns: checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
