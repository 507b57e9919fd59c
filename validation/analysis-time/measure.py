#!/usr/bin/python3
"""The analysis time of recorded runs (record.sh): `tremor analyze --json` on
each run file, best of --repeats, wall and CPU seconds (user + system of the
child), with the run's segments, usable groups and run time
(docs/analysis-time.md).

usage: measure.py TREMOR RUNS_DIR [--repeats N] [--threads N]
"""
import argparse
import glob
import json
import os
import resource
import subprocess
import time


def timed(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tremor")
    parser.add_argument("runs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="tremor analyze --threads (0: automatic)")
    args = parser.parse_args()
    print(f"{'app':8} {'segments':>9} {'groups':>7} {'run_s':>8} {'analyse_s':>10} {'cpu_s':>7}")
    for path in sorted(glob.glob(os.path.join(args.runs, "*", "*.h5"))):
        app = os.path.basename(os.path.dirname(path))
        best_wall = best_cpu = float("inf")
        report = {}
        for _ in range(args.repeats):
            wall, cpu, out = timed([args.tremor, "analyze", path, "--json", "--threads", str(args.threads)])
            best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
            report = json.loads(out) if out else {}
        print(f"{app:8} {report.get('segments', '?'):>9} {len(report.get('groups', [])):>7} "
              f"{report.get('run_time_s', float('nan')):8.2f} {best_wall:10.2f} {best_cpu:7.2f}")


if __name__ == "__main__":
    main()
