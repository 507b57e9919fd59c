#!/usr/bin/env python3
"""The demo's closing line (scripts/demo_truth.py) sets Tremor's estimate
beside both parts of the truth: the injected share and the machine's own
run-queue share, and their sum.

- By construction: 10.1 % injected and 4.1 % queued read
  "injected 10.1 % + the machine's own processes 4.1 % (...) = 14.2 %"; a
  band gives both ends; a share above what the run can lose is capped; logs
  without run-queue figures say so. A line that drops the machine's part, or
  adds the high bound to the low, fails here.
- On a recorded replay with its injector logs (test/data/replays/demo/
  sparse-0), the script's line carries the same figures as the logs read
  directly (scripts/injected_path.py) and Tremor's estimate.
usage: test_demo_truth.py TREMOR
"""
import glob
import gzip
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPTS = os.path.join(REPOSITORY, "scripts")
sys.path.insert(0, SCRIPTS)
spec = importlib.util.spec_from_file_location("demo_truth", os.path.join(SCRIPTS, "demo_truth.py"))
demo_truth = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo_truth)
import h5py  # noqa: E402
import injected_path  # noqa: E402

failures = []


def expect(got, wanted, what):
    if got != wanted:
        failures.append(f"{what}:\n  got    {got}\n  wanted {wanted}")


expect(demo_truth.truth_text(10.1, (4.1, 4.1), 100.0),
       "injected 10.1 % + the machine's own processes 4.1 % (run queue, counted by the kernel) = 14.2 %",
       "one figure")
expect(demo_truth.truth_text(10.0, (1.0, 3.0), 50.0),
       "injected 10.0 % + the machine's own processes 2.0-6.0 % (run queue, counted by the kernel) = 12.0-16.0 %",
       "a band")
expect(demo_truth.truth_text(20.0, (1.0, 5.0), 2.0),
       "injected 20.0 % + the machine's own processes 50.0-80.0 % (run queue, counted by the kernel) = 70.0-100.0 %",
       "capped at the whole run")
expect(demo_truth.truth_text(3.0, None, 10.0),
       "injected 3.0 % of the run (the kernel's run-queue delays were not logged)", "no run-queue figures")

with tempfile.TemporaryDirectory() as work:
    for packed in glob.glob(os.path.join(REPOSITORY, "test", "data", "replays", "demo", "sparse-0", "*.gz")):
        with gzip.open(packed, "rb") as source, open(os.path.join(work, os.path.basename(packed)[:-3]), "wb") as sink:
            shutil.copyfileobj(source, sink)
    run_file = glob.glob(os.path.join(work, "*.h5"))[0]
    with h5py.File(run_file, "r") as h5:
        injected = injected_path.injected_percent(h5)
        low_s, high_s = injected_path.machine_path(h5)
        run_time_s = float(h5.attrs["run_time_s"])
    line = subprocess.run([sys.executable, os.path.join(SCRIPTS, "demo_truth.py"), "--tremor", sys.argv[1], run_file],
                          capture_output=True, text=True, timeout=300).stdout.strip()
    low, high = 100 * low_s / run_time_s, 100 * high_s / run_time_s
    wanted = (f"injected {injected:.1f} % + the machine's own processes {demo_truth.span(low, high)} % "
              f"(run queue, counted by the kernel) = {demo_truth.span(injected + low, injected + high)} %; Tremor: ")
    if not line.startswith(wanted) or not re.search(r"Tremor: [0-9.]+ % \(95 % interval [0-9.]+-[0-9.]+ %\)$", line):
        failures.append(f"replay sparse-0:\n  got    {line}\n  wanted {wanted}<estimate> (95 % interval <low>-<high> %)")

for failure in failures:
    print("FAILED", failure)
print("demo truth line: " + ("FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)
