"""What the Python test drivers share: checks, skips, and the measurement of a
busy machine that alone may excuse a failed timing check.

A test's truth and its skip decisions never come from Tremor's output. Whether
the machine was busy during a run is measured from the kernel
(validation/campaigns/machine_load.py, shared with the campaigns): the run-queue
delay of the job's own processes plus the steal time, as a share of the run.
That is interference the machine added to the job, which Tremor rightly
reports: a check comparing Tremor's figures with a planted truth allows it,
and a run that got more of it than the check's tolerance cannot be compared
at all.

Retries: a failed timing check is run again once, only when the failed
attempt was measured busy, and the retry is logged; when the retry fails on
a busy machine too the test is skipped (exit SKIPPED, with the reason), and
any failure on a machine measured quiet fails the test.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "validation", "campaigns"))
from machine_load import run_measured  # noqa: E402,F401  (for the drivers)

SKIPPED = 77  # CTest SKIP_RETURN_CODE of every test that may skip


class CheckFailed(Exception):
    """A check failed: the product is wrong (whatever the machine did)."""


class TimingCheckFailed(CheckFailed):
    """A check of timings failed, which the machine's own load can cause: excused
    (one retry, then a skip) only when the run was measured busy. The driver
    sets .busy (the machine added more than the check's tolerance) and
    .machine (the measurement, in words)."""


def check(condition, message, timing=False):
    if not condition:
        raise (TimingCheckFailed if timing else CheckFailed)(message)


def skip(reason):
    """Ends the test as skipped; CI prints the reason (scripts/print-skips.py)."""
    print(f"SKIPPED: {reason}", flush=True)
    sys.exit(SKIPPED)


def with_one_retry(attempt, what):
    """Runs attempt() under the retry rule of this module. attempt() returns a
    text on the machine's load when its checks passed; a failed timing check
    raises TimingCheckFailed with .busy (the run was measured busy: the machine
    added more than the check's tolerance) and .machine (the measurement, in
    words) set. Exits 1 on a failure and SKIPPED when both attempts failed on
    a busy machine."""
    for number in (1, 2):
        try:
            machine = attempt()
            print(f"{what}: attempt {number} passed; {machine}")
            return
        except TimingCheckFailed as error:
            busy, machine = getattr(error, "busy", False), getattr(error, "machine", "load not measured")
            print(f"{what}: attempt {number} CHECK FAILED: {error}; {machine}")
            if not busy:
                print(f"{what}: the machine was not measured busy: a failure")
                sys.exit(1)
            if number == 1:
                print(f"{what}: the machine was busy: running once more (the one retry)")
                continue
            skip(f"{what}: both attempts ran on a machine measured busy ({machine}); "
                 "their timings were not compared with the truth")
        except CheckFailed as error:
            print(f"{what}: attempt {number} CHECK FAILED: {error}")
            sys.exit(1)


def print_calibration(rows, unit="runs"):
    """--calibrate N of the drivers: the mean and SD of each figure the checks
    recorded (a value or a list per row) over the rows in which the machine
    took less than 1 % of the run (`machine_percent`)."""
    quiet = [r for r in rows if r.get("machine_percent", 100.0) < 1.0]
    print(f"{len(quiet)} of {len(rows)} {unit} with the machine's share below 1 %:")
    for key in sorted({k for r in rows for k in r} - {"machine_percent"}):
        values = [v for r in quiet if key in r for v in (r[key] if isinstance(r[key], list) else [r[key]])]
        if len(values) >= 2:
            print(f"  {key}: mean {statistics.mean(values):+.4f}, sd {statistics.stdev(values):.4f} "
                  f"({len(values)} values)")
