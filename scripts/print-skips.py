#!/usr/bin/env python3
"""Prints every skipped test of a CTest run with its reason, and fails the run
when a skip is not for a listed capability.

usage: print-skips.py JUNIT_XML   (from ctest --output-junit FILE)
A test may skip (CTest SKIP_RETURN_CODE) only for a capability this machine
lacks, listed in test/common/capabilities.py, and says so on exactly one line
`SKIPPED: capability <name>: <detail>`. Exit 0 when every skip does; 1 when
one names no listed capability (a busy machine, a timing miss, a test not run
for any other reason, no line at all) or the file cannot be read.
"""
import importlib.util
import os
import sys
import xml.etree.ElementTree as ElementTree

CAPABILITIES_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "common", "capabilities.py")


def load_capabilities():
    spec = importlib.util.spec_from_file_location("capabilities", CAPABILITIES_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    capabilities = load_capabilities()
    try:
        cases = list(ElementTree.parse(sys.argv[1]).getroot().iter("testcase"))
    except (OSError, ElementTree.ParseError) as error:
        print(f"print-skips: cannot read {sys.argv[1]}: {error}")
        return 1
    skipped, refused = [], []
    for case in cases:
        if case.find("skipped") is None:
            continue
        output = (case.findtext("system-out") or "").splitlines()
        reasons = [line for line in output if line.startswith("SKIPPED:")]
        named = [capabilities.capability_of(line) for line in reasons]
        allowed = len(reasons) == 1 and named[0] is not None
        skipped.append((case.get("name"), reasons or output[-1:] or ["(no output)"], allowed))
        if not allowed:
            refused.append(case.get("name"))
    print(f"== {len(skipped)} test(s) skipped")
    for name, reasons, allowed in skipped:
        for reason in reasons:
            print(f"  {name}: {reason}" + ("" if allowed else "   <- NOT A LISTED CAPABILITY"))
    if refused:
        print(f"print-skips: {len(refused)} skip(s) name no capability of test/common/capabilities.py "
              f"({', '.join(sorted(capabilities.CAPABILITIES))}): {', '.join(refused)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
