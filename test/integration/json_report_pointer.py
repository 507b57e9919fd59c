#!/usr/bin/env python3
"""`tremor analyze REPORT.json` refuses the JSON report (exit 2, never a crash)
and names the run file to analyse instead: the report's "output_file" where it
exists, else the file of that name beside the report (a moved directory), else
the .h5 of the same stem; with none of them it says to analyse the .h5.

usage: json_report_pointer.py TREMOR
"""
import json
import os
import subprocess
import sys
import tempfile


def analyze(tremor, report):
    return subprocess.run([tremor, "analyze", report], capture_output=True, text=True, timeout=60)


def main():
    tremor = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix="tremor-json-pointer-") as top:
        ran, moved = os.path.join(top, "ran"), os.path.join(top, "moved")
        os.mkdir(ran)
        os.mkdir(moved)
        cases = []
        # output_file exists as written.
        run_file = os.path.join(ran, "app-1-0.h5")
        open(run_file, "wb").close()
        report = os.path.join(ran, "app-1-0.json")
        json.dump({"output_file": run_file}, open(report, "w"))
        cases.append(("as written", report, run_file))
        # The directory moved: output_file is stale, the file of that name lies beside the report.
        beside = os.path.join(moved, "app-2-0.h5")
        open(beside, "wb").close()
        report = os.path.join(moved, "app-2-0-report.json")
        json.dump({"output_file": os.path.join(top, "gone", "app-2-0.h5")}, open(report, "w"))
        cases.append(("moved", report, beside))
        # Not a report Tremor wrote (no output_file), but a .h5 of the same stem.
        stem_h5 = os.path.join(moved, "app-3-0.h5")
        open(stem_h5, "wb").close()
        report = os.path.join(moved, "app-3-0.json")
        open(report, "w").write("[1, 2")
        cases.append(("same stem", report, stem_h5))
        # Nothing to point to.
        report = os.path.join(moved, "lonely.json")
        json.dump({"output_file": "/nonexistent/x.h5"}, open(report, "w"))
        cases.append(("none", report, None))
        for label, report, expected in cases:
            result = analyze(tremor, report)
            message = result.stderr.strip()
            if result.returncode != 2:
                failures.append(f"{label}: exit status {result.returncode}, expected 2 (bad input): {message}")
            if "JSON report, not a run file" not in message:
                failures.append(f"{label}: the message does not say it is the JSON report: {message!r}")
            if expected and f"tremor analyze {expected}" not in message:
                failures.append(f"{label}: the message does not name {expected}: {message!r}")
            if not expected and ".h5" not in message:
                failures.append(f"{label}: the message does not say to analyse the .h5: {message!r}")
    for failure in failures:
        print("FAILED:", failure)
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
