#!/usr/bin/python3
"""Rank 0's end-of-run analysis borrows its node's other ranks' CPUs
(interpose/analysis_cpus.hpp): the bundled demo on 2 ranks, each bound to one
core by the launcher (Open MPI's --bind-to core); the profiler's debug line
must say the analysis runs on 2 threads with the other rank's CPU included,
and the run must end as without it. Fails for a profiler that leaves the
analysis on rank 0's one core.

usage: analysis_cpus.py --launcher "mpirun.openmpi ..." --preload LIB --demo BSP_DEMO
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from tremor_testing import check, skip_for, CheckFailed  # noqa: E402

EXPECTED = "analysis on 2 threads, the node's other ranks' CPUs included"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--demo", required=True)
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        skip_for("few-cores", "2 ranks bound to a core each need 2 CPUs")
    with tempfile.TemporaryDirectory(prefix="tremor-cpus-") as out:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_")}
        env.update(TREMOR_OUTPUT_DIR=out, TREMOR_LOG_LEVEL="debug", TREMOR_REPORT="none", OMP_NUM_THREADS="1")
        command = args.launcher.split() + ["--bind-to", "core", "-x", f"LD_PRELOAD={args.preload}", "-x",
                                           "TREMOR_OUTPUT_DIR", "-x", "TREMOR_LOG_LEVEL", "-x", "TREMOR_REPORT",
                                           "-np", "2", args.demo, "-n", "50", "-q"]
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        try:
            check(result.returncode == 0, f"exit {result.returncode}: {result.stderr[-1500:]}")
            lines = [line for line in result.stderr.splitlines() if "analysis on" in line]
            check(len(lines) == 1, f"one 'analysis on' line expected, got {lines}")
            check(EXPECTED in lines[0], f"expected '{EXPECTED}', got '{lines[0]}'")
        except CheckFailed as failure:
            print("FAILED:", failure)
            return 1
    print("ok:", EXPECTED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
