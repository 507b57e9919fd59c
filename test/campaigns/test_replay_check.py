#!/usr/bin/env python3
"""The replay check's rules on values known by construction, and its
tolerance's derivation on the held-out tables kept in validation/heldout/:

- a miss is the distance outside the band, 0 inside;
- the tolerance grows with the band's high end, is positive, and comes from
  a held-out run that exists (its relative miss reproduced from its row);
- an estimate of 0 for a planted 10 % fails, one inside the band passes, one
  just beyond the tolerance fails;
- a run with nothing planted fails when HIGH or above its band's high end
  plus the tolerance;
- an I/O-only run whose lost time is booked elsewhere fails;
- the interval "meets" the band only when the two overlap;
- run as CI runs it, an estimator that always answers 0 makes the check
  exit 1 and say why on its output and in its table (a check that fails
  without its reason, or with a traceback, fails here).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
sys.path.insert(0, HERE)
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import replay_check  # noqa: E402
import replay_tolerance  # noqa: E402

failures = []


def expect(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def report(estimate, ci, klass="medium", io=0.0):
    return {"interference_percent": estimate, "lost_percent": estimate, "method": "primary",
            "lost_percent_ci": list(ci), "class": klass,
            "diagnosis": {"components": {"lost": {"compute": 0.0, "mpi": estimate - io, "io": io}}}}


expect(replay_tolerance.miss(5.0, 4.0, 6.0) == 0.0, "inside the band: no miss")
expect(abs(replay_tolerance.miss(7.5, 4.0, 6.0) - 1.5) < 1e-12, "above: the distance to the high end")
expect(abs(replay_tolerance.miss(1.0, 4.0, 6.0) - 3.0) < 1e-12, "below: the distance to the low end")

r, worst = replay_tolerance.relative_spread()
rows = replay_tolerance.heldout_misses()
expect(len(rows) >= 30, f"the derivation reads the held-out runs ({len(rows)})")
expect(0.0 < r < 0.5, f"the relative spread is positive and below one half ({r:.4f})")
expect(abs(worst[2] / worst[3] - r) < 1e-12 and worst in rows, "the spread is a held-out run's own relative miss")
expect(replay_tolerance.tolerance_pp(20.0, r) > replay_tolerance.tolerance_pp(2.0, r) > 0.0,
       "the tolerance grows with the band's high end")

R = 0.05  # a fixed spread for the rules below: tolerance = 2 * 0.05 * high
_, _, failed = replay_check.judge("sparse", 10.0, 10.2, 11.0, report(0.0, (0.0, 0.0)), R)
expect(failed != [], "an estimate of 0 for 10 % planted fails")
meets, _, failed = replay_check.judge("sparse", 10.0, 10.2, 11.0, report(10.5, (10.1, 10.9)), R)
expect(failed == [] and meets, "an estimate inside its band passes and its interval meets the band")
_, _, failed = replay_check.judge("sparse", 10.0, 10.2, 11.0, report(11.0 + 1.1 + 0.01, (11.0, 12.3)), R)
expect(failed != [], "an estimate just beyond the tolerance (1.1 pp) fails")
_, _, failed = replay_check.judge("sparse", 10.0, 10.2, 11.0, report(11.0 + 1.1 - 0.01, (11.0, 12.3)), R)
expect(failed == [], "an estimate just inside the tolerance passes")
_, meets, _ = replay_check.judge("sparse", 10.0, 10.2, 11.0, report(11.5, (11.5, 11.5)), R)
expect(not meets, "an interval held at a point outside the band does not meet it")
_, _, failed = replay_check.judge("clean", 0.0, 0.1, 1.0, report(0.9, (0.8, 1.0), klass="high"), R)
expect(failed != [], "a clean run read HIGH fails")
_, _, failed = replay_check.judge("clean", 0.0, 0.1, 1.0, report(1.2, (1.0, 1.3), klass="low"), R)
expect(failed != [], "a clean run above its band's high end plus the tolerance fails")
_, _, failed = replay_check.judge("io_only", 10.0, 10.2, 11.0, report(10.5, (10.1, 10.9), io=2.0), R)
expect(failed != [], "I/O delays booked to MPI fail")
_, _, failed = replay_check.judge("io_only", 10.0, 10.2, 11.0, report(10.5, (10.1, 10.9), io=9.5), R)
expect(failed == [], "I/O delays booked to file I/O pass")

named = report(0.9, (0.8, 1.0), klass="low")
named["diagnosis"]["slow_ranks"] = [{"rank": 1, "kind": "loaded", "lost_percent": 14.0}]
_, _, failed = replay_check.judge("clean", 0.0, 0.1, 1.0, named, R)
expect(failed != [], "a clean run naming a rank beyond its band fails")
named["diagnosis"]["slow_ranks"] = [{"rank": 1, "kind": "slow", "lost_percent": 0.9}]
_, _, failed = replay_check.judge("clean", 0.0, 0.1, 1.0, named, R)
expect(failed == [], "a clean run naming a rank within its band passes")

headline = report(10.5, (10.1, 10.9))
headline["interference_percent"] = 3.0
_, _, failed = replay_check.judge("sparse", 10.0, 10.2, 11.0, headline, R)
expect(failed != [], "a headline other than the primary estimate fails")

# End to end: one real replay, analysed by a "tremor" that always answers 0.
with tempfile.TemporaryDirectory(prefix="replay-check-") as scratch:
    data = os.path.join(scratch, "replays")
    shutil.copytree(os.path.join(HERE, "..", "data", "replays", "demo", "sparse-0"), os.path.join(data, "demo", "sparse-0"))
    zero = os.path.join(scratch, "tremor")
    with open(zero, "w") as handle:
        handle.write('#!/bin/sh\necho \'{"interference_percent": 0, "lost_percent": 0, "method": "primary", '
                     '"lost_percent_ci": [0, 0], "class": "low", "diagnosis": {}}\'\n')
    os.chmod(zero, 0o755)
    table = os.path.join(scratch, "table.txt")
    result = subprocess.run([sys.executable, os.path.join(HERE, "replay_check.py"), "--tremor", zero, "--data", data,
                             "--table", table], capture_output=True, text=True, timeout=300)
    expect(result.returncode == 1, f"an estimator answering 0 fails the check (exit {result.returncode})")
    expect("Traceback" not in result.stderr, "the check fails by its verdict, not by a crash")
    reason = "CHECK FAILED: demo/sparse-0: estimate 0.00 % outside"
    expect(reason in result.stdout, "the check's output says which replay failed and why")
    expect(os.path.exists(table) and reason in open(table).read(), "the table file says it too")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
