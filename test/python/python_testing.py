"""Shared by the tests of the tremor Python package (run with Debian's python3)."""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ux"))
from ux_common import check, finish  # noqa: E402,F401  (one way to record and end a check script)

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
