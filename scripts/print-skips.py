#!/usr/bin/env python3
"""Prints every skipped test of a CTest run with its reason.

usage: print-skips.py JUNIT_XML   (from ctest --output-junit FILE)
A test may skip (CTest SKIP_RETURN_CODE) only for a missing capability or a
machine measured busy, and says why on a line starting with "SKIPPED:"; that
line is printed, or the output's last line when there is none.
"""
import sys
import xml.etree.ElementTree as ElementTree


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        cases = ElementTree.parse(sys.argv[1]).getroot().iter("testcase")
    except (OSError, ElementTree.ParseError) as error:
        print(f"print-skips: cannot read {sys.argv[1]}: {error}")
        return 1
    skipped = []
    for case in cases:
        if case.find("skipped") is None:
            continue
        output = (case.findtext("system-out") or "").splitlines()
        reasons = [line for line in output if line.startswith("SKIPPED:")]
        skipped.append((case.get("name"), reasons or output[-1:] or ["(no output)"]))
    print(f"== {len(skipped)} test(s) skipped")
    for name, reasons in skipped:
        for reason in reasons:
            print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
