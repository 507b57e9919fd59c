#!/usr/bin/python3
"""The demo's last line: what the injector planted against what Tremor found.

usage: demo_truth.py RUN_FILE [--tremor PATH]

The truth is the injected critical path of the run (scripts/injected_path.py),
read from the injector's own logs beside the run file; Tremor's figures are
`tremor analyze --json` of the run file. Exit 2 when either cannot be read.
"""
import argparse
import json
import subprocess
import sys

import h5py

import injected_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_file")
    parser.add_argument("--tremor", default="tremor")
    options = parser.parse_args()
    try:
        with h5py.File(options.run_file, "r") as h5:
            injected_s, _ = injected_path.critical_path(h5)
            injected_pct = injected_path.injected_percent(h5)
    except (OSError, KeyError, ValueError) as error:
        print(f"demo_truth: cannot read the injected delays of {options.run_file}: {error}", file=sys.stderr)
        return 2
    analysis = subprocess.run([options.tremor, "analyze", "--json", options.run_file], capture_output=True, text=True)
    if analysis.returncode != 0:
        print(f"demo_truth: tremor analyze failed: {analysis.stderr.strip()}", file=sys.stderr)
        return 2
    report = json.loads(analysis.stdout)
    if not report["estimate_possible"]:
        print(f"injected {injected_s:.3f} s ({injected_pct:.1f} % of the run); Tremor: no estimate "
              f"({report['no_estimate_reason']})")
        return 0
    low, high = report["lost_percent_ci"]
    print(f"injected {injected_s:.3f} s ({injected_pct:.1f} % of the run); Tremor: {report['lost_percent']:.1f} % "
          f"(95 % interval {low:.1f}-{high:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
