"""Shared by the tests of the tremor Python package (run with Debian's python3)."""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

failures = []


def check(condition, what):
    """Records a failed expectation and keeps going, so one run reports every problem."""
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def finish(name):
    if failures:
        print(f"{name}: {len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print(f"{name}: all checks passed")
    sys.exit(0)


def run_files(directory):
    """The runs python.make_runs left: three demo runs, then one replay, in name order."""
    demo = sorted(glob.glob(os.path.join(directory, "demo-*", "*.h5")))
    replay = sorted(glob.glob(os.path.join(directory, "replay", "*.h5")))
    if len(demo) != 3 or len(replay) != 1:
        print(f"CHECK FAILED: expected 3 demo runs and 1 replay in {directory}, found {demo + replay}")
        sys.exit(1)
    return demo + replay


def analyze_json(tremor, path):
    """The report straight from the tool, to compare the package's figures with."""
    done = subprocess.run([tremor, "analyze", "--json", "--", path], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)
