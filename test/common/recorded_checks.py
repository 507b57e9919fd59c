"""Checks that record a failure and go on, so one run of a check script reports
every problem (tremor_testing.check raises at the first instead)."""
import sys

failures = []


def check(condition, what):
    """Records a failed expectation and returns the condition, for checks that guard later ones."""
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr, flush=True)
    return condition
