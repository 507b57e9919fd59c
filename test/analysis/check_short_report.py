#!/usr/bin/env python3
"""The default text report of every recorded replay is a screenful.

For each replay (test/data/replays/*/*/*.h5.gz: the demo and Quantum
ESPRESSO, every kind of interference): `tremor analyze FILE` must print at
most 25 lines as an 80-column terminal shows them (a longer line counts as
the lines it wraps to), none of the full report's tables, a 95 % interval
whose two ends differ as printed, and the weak-scaling assumption beside the
predictions; `tremor analyze --json` of the first replay of each workload
carries `prediction_scaling`. The truth of each check comes from the
printed text and the rules above, never from another Tremor figure.

    check_short_report.py --tremor build/estimators/tremor --replays test/data/replays
      [--full]       analyse with --full instead: the known-wrong output, which must fail
      [--first-runs] only the first run of each kind (CI: every kind of report, a third of the time)
"""
import argparse
import concurrent.futures
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_LINES = 25
COLUMNS = 80
INTERVAL = re.compile(r"95 % interval (\d+\.\d+)-(\d+\.\d+) %|95 % interval \d+\.\d+ % \(interval < 0\.001 pp wide\)")
FULL_TABLES = ("All methods", "Groups: ", "Stragglers")


def screen_lines(text):
    return sum(max(1, -(-len(line) // COLUMNS)) for line in text.splitlines())


def replays(root, first_runs=False):
    found = []
    for workload in sorted(os.listdir(root)):
        folder = os.path.join(root, workload)
        if not os.path.isdir(folder):
            continue
        for kind in sorted(os.listdir(folder)):
            if not os.path.isdir(os.path.join(folder, kind)) or (first_runs and not kind.endswith("-0")):
                continue
            for name in sorted(os.listdir(os.path.join(folder, kind))):
                if name.endswith(".h5.gz"):
                    found.append((workload, kind, os.path.join(folder, kind, name)))
    return found


def unpacked(path, into):
    target = os.path.join(into, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as source, open(target, "wb") as sink:
        shutil.copyfileobj(source, sink)
    return target


def problems_of(text):
    """What is wrong with one default report, as sentences (empty: fine)."""
    problems = []
    lines = screen_lines(text)
    if lines > MAX_LINES:
        problems.append(f"{lines} lines on an {COLUMNS}-column screen (at most {MAX_LINES})")
    for table in FULL_TABLES:
        if table in text:
            problems.append(f"prints the full report's {table.strip()!r}")
    flat = " ".join(text.split())
    if "% of this run was lost to interference" in flat:
        match = INTERVAL.search(flat)
        if not match:
            problems.append("no 95 % interval beside the headline")
        elif match.group(1) is not None and match.group(1) == match.group(2):
            problems.append(f"the interval's ends are equal as printed: {match.group(0)!r}")
        if "95 % of such intervals hold the true lost share" not in flat:
            problems.append("no sentence saying what the interval means")
    if "Predicted run time" in flat and "weak scaling (each process keeps its work)" not in flat:
        problems.append("a prediction without its weak-scaling assumption")
    return problems


def analyse(tremor, workload, kind, path, scratch, full):
    folder = tempfile.mkdtemp(dir=scratch)
    run_file = unpacked(path, folder)
    command = [tremor, "analyze"] + (["--full"] if full else []) + [run_file]
    environment = {k: v for k, v in os.environ.items() if k != "TREMOR_REPORT_DETAIL"}
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600)
    problems = [f"exit {result.returncode}: {result.stderr.strip()[-300:]}"] if result.returncode else []
    problems += problems_of(result.stdout)
    scaling = None
    if kind.endswith("-0") and kind.startswith("clean"):
        answer = subprocess.run([tremor, "analyze", "--json", run_file], capture_output=True, text=True,
                                env=environment, timeout=600)
        report = json.loads(answer.stdout) if answer.returncode == 0 else {}
        scaling = report.get("prediction_scaling", {})
        if scaling.get("mode") != "weak" or "each process keeps its work" not in scaling.get("assumption", ""):
            problems.append(f"JSON prediction_scaling is {scaling!r}")
    shutil.rmtree(folder, ignore_errors=True)
    return workload, kind, screen_lines(result.stdout), problems, scaling is not None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--replays", required=True)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--first-runs", action="store_true")
    options = parser.parse_args()
    found = replays(options.replays, options.first_runs)
    if not found:
        print(f"FAIL: no replays under {options.replays}")
        return 1
    failures = 0
    json_checked = 0
    with tempfile.TemporaryDirectory() as scratch, concurrent.futures.ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(analyse, options.tremor, w, k, p, scratch, options.full) for w, k, p in found]
        for job in jobs:
            workload, kind, lines, problems, checked_json = job.result()
            json_checked += checked_json
            verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)
            print(f"{workload:18} {kind:20} {lines:3} lines  {verdict}")
            failures += bool(problems)
    if json_checked == 0:
        print("FAIL: no clean replay to check the JSON's prediction_scaling on")
        failures += 1
    print(f"{len(found)} replays, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
