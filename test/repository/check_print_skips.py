#!/usr/bin/env python3
"""scripts/print-skips.py on fake CTest JUnit files: a skip for a listed
capability passes (exit 0); a busy-machine skip, an unknown capability, a
skip without its line, two lines, and an unreadable file fail (exit 1).
tremor_testing.skip_for refuses a name that is not listed."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PRINT_SKIPS = os.path.join(TOP, "scripts", "print-skips.py")
sys.path.insert(0, os.path.join(TOP, "test", "common"))
from capabilities import CAPABILITIES, skip_line  # noqa: E402


def junit(cases):
    """cases: [(name, skipped, output)] as ctest --output-junit writes them."""
    body = []
    for name, skipped, output in cases:
        status = "notrun" if skipped else "run"
        inner = '<skipped message="SKIP_RETURN_CODE=77"/>' if skipped else ""
        text = output.replace("&", "&amp;").replace("<", "&lt;")
        body.append(f'<testcase name="{name}" classname="{name}" time="0.1" status="{status}">{inner}'
                    f"<system-out>{text}</system-out></testcase>")
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="t" tests="{len(cases)}">'
            + "".join(body) + "</testsuite>\n")


def main():
    passing = ("ok.test", False, "checks passed\n")
    allowed = ("counters.perf.case", True, "SKIPPED: capability no-perf-switch-records: perf_event_open: EACCES\n")
    cases = [
        ("no skip at all", [passing], 0),
        ("a skip for a listed capability", [passing, allowed], 0),
        ("every listed capability", [(f"t{i}", True, skip_line(name, "detail") + "\n")
                                      for i, name in enumerate(CAPABILITIES)], 0),
        ("a busy-machine skip", [allowed, ("integration.x", True,
                                           "SKIPPED: both attempts ran on a machine measured busy\n")], 1),
        ("an unknown capability", [("x", True, "SKIPPED: capability busy-machine: it was busy\n")], 1),
        ("a capability without a detail", [("x", True, "SKIPPED: capability few-cores:\n")], 1),
        ("a skip without its line", [("x", True, "output\nlast line\n")], 1),
        ("two skip lines", [("x", True, allowed[2] + allowed[2])], 1),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for what, content, expected in cases + [("an unreadable file", None, 1)]:
            path = os.path.join(scratch, "junit.xml")
            if content is None:
                path = os.path.join(scratch, "missing.xml")
            else:
                with open(path, "w") as handle:
                    handle.write(junit(content))
            result = subprocess.run([sys.executable, PRINT_SKIPS, path], capture_output=True, text=True)
            good = result.returncode == expected
            failures += not good
            print(f"{'ok  ' if good else 'FAIL'} {what}: exit {result.returncode}, expected {expected}")
            if not good:
                print(result.stdout + result.stderr)
    # skip_for refuses an unlisted name: the test fails instead of skipping.
    refused = subprocess.run([sys.executable, "-c", "import tremor_testing; tremor_testing.skip_for('busy', 'x')"],
                             env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "test", "common")),
                             capture_output=True, text=True)
    good = refused.returncode not in (0, 77) and "KeyError" in refused.stderr
    failures += not good
    print(f"{'ok  ' if good else 'FAIL'} skip_for('busy') fails the test: exit {refused.returncode}")
    listed = subprocess.run([sys.executable, "-c",
                             "import tremor_testing; tremor_testing.skip_for('few-cores', '1 CPU')"],
                            env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "test", "common")),
                            capture_output=True, text=True)
    good = listed.returncode == 77 and listed.stdout == "SKIPPED: capability few-cores: 1 CPU\n"
    failures += not good
    print(f"{'ok  ' if good else 'FAIL'} skip_for('few-cores') prints its one line and exits 77: "
          f"{listed.returncode} {listed.stdout!r}")
    print("print-skips checks " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
