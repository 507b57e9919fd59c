#!/usr/bin/python3
"""The demo's last line: what the injector planted against what Tremor found.

usage: demo_truth.py RUN_FILE [--tremor PATH]

The truth has two parts, both from outside Tremor: the injected critical path
of the run and what the machine's own processes cost that path (the run-queue
delay the kernel counted, as the injector logged it; a low and a high bound),
both from the injector's logs beside the run file (scripts/injected_path.py).
Tremor's figures are `tremor analyze --json` of the run file. Exit 2 when
either cannot be read.
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
            machine = injected_path.machine_path(h5)
            run_time_s = float(h5.attrs["run_time_s"])
    except (OSError, KeyError, ValueError) as error:
        print(f"demo_truth: cannot read the injected delays of {options.run_file}: {error}", file=sys.stderr)
        return 2
    analysis = subprocess.run([options.tremor, "analyze", "--json", options.run_file], capture_output=True, text=True)
    if analysis.returncode != 0:
        print(f"demo_truth: tremor analyze failed: {analysis.stderr.strip()}", file=sys.stderr)
        return 2
    report = json.loads(analysis.stdout)
    truth = truth_text(injected_pct, machine, run_time_s)
    if not report["estimate_possible"]:
        print(f"{truth}; Tremor: no estimate ({report['no_estimate_reason']})")
        return 0
    low, high = report["lost_percent_ci"]
    print(f"{truth}; Tremor: {report['lost_percent']:.1f} % (95 % interval {low:.1f}-{high:.1f} %)")
    return 0


def span(low, high):
    """"4.1" or "3.9-4.3": a bound pair at one decimal, one number when they agree."""
    low_text, high_text = f"{low:.1f}", f"{high:.1f}"
    return low_text if low_text == high_text else f"{low_text}-{high_text}"


def truth_text(injected_pct, machine, run_time_s):
    """What was planted, plus what the machine's own processes cost the run
    (kernel run queue), and their sum: the two parts of the truth."""
    if machine is None:
        return f"injected {injected_pct:.1f} % of the run (the kernel's run-queue delays were not logged)"
    # The high bound adds every rank's run-queue delay; no run loses more than all of it.
    low, high = (min(100.0 * seconds / run_time_s, 100.0 - injected_pct) for seconds in machine)
    return (f"injected {injected_pct:.1f} % + the machine's own processes {span(low, high)} % "
            f"(run queue, counted by the kernel) = {span(injected_pct + low, injected_pct + high)} %")


if __name__ == "__main__":
    sys.exit(main())
