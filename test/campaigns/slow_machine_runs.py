#!/usr/bin/python3
"""Runs the VM slowed by itself: each uninjected program of the demo's kinds
campaign ran 3 times on 2026-11-25 (test/data/slow_machine/runs.csv); one run
of each fell in a spell when the virtual machine ran at half speed, with no
other process on it. The wall clock measures what that spell cost: the run's
time beyond the median of its two siblings. Tremor's primary estimate of each
slow run must lie within 3 pp of it, and its siblings must read low.

    slow_machine_runs.py --tremor B/estimators/tremor [--data test/data/slow_machine]
"""
import argparse
import csv
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SLOW_FACTOR = 1.3  # a run this many times its siblings' median is a slow one
WITHIN_PP = 3.0
SIBLING_MAX_PERCENT = 2.0


def primary_percent(tremor, gz_path, work):
    path = os.path.join(work, os.path.basename(gz_path)[:-3])
    with gzip.open(gz_path, "rb") as source, open(path, "wb") as target:
        shutil.copyfileobj(source, target)
    result = subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise SystemExit(f"tremor analyze {path}: exit {result.returncode}: {result.stderr.strip()}")
    return json.loads(result.stdout)["lost_percent"]


def check_against_wall_clock(failures, label, name, time_s, reference_s, estimate, within_pp):
    """Prints a run slowed against its reference time; a failure when the estimate is not within_pp of it."""
    wall = 100.0 * (time_s - reference_s) / time_s
    print(f"{label} {time_s:6.3f} s against {reference_s:6.3f} s: wall clock {wall:5.2f} %, primary {estimate:5.2f} %")
    if abs(estimate - wall) > within_pp:
        failures.append(f"{name}: primary {estimate:.2f} % for {wall:.2f} % lost by the wall clock")


def exit_status(failures):
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                                       "slow_machine"))
    args = parser.parse_args()
    with open(os.path.join(args.data, "runs.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    programs = {}
    for row in rows:
        programs.setdefault(row["program"], []).append(row)
    failures = []
    slow_runs = 0
    with tempfile.TemporaryDirectory(prefix="tremor-slow-machine-") as work:
        for program, runs in sorted(programs.items()):
            times = [float(run["run_time_s"]) for run in runs]
            for i, run in enumerate(runs):
                others = statistics.median(t for j, t in enumerate(times) if j != i)
                estimate = primary_percent(args.tremor, os.path.join(args.data, run["file"]), work)
                if times[i] >= SLOW_FACTOR * others:
                    slow_runs += 1
                    check_against_wall_clock(failures, f"{program:11s} {run['file']:22s}", run["file"], times[i], others,
                                             estimate, WITHIN_PP)
                else:
                    print(f"{program:11s} {run['file']:22s} {times[i]:6.3f} s (a sibling): primary {estimate:5.2f} %")
                    if estimate > SIBLING_MAX_PERCENT:
                        failures.append(f"{run['file']}: a run at its siblings' speed reads {estimate:.2f} %")
    if slow_runs == 0:
        failures.append("no slow run in the data")
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
