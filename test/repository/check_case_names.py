#!/usr/bin/env python3
"""Every Catch2 case name can become one CTest entry: catch_discover_tests
splits a name at ';' (CMake's list separator) into two tests that match no
case, and Catch2 passes a test spec that matches nothing, so such a case
would never run while CTest reports it passed.

usage: check_case_names.py ROOT      exit 1 naming each offending case
       check_case_names.py --self-test
"""
import pathlib
import re
import sys
import tempfile

CASE = re.compile(r'\b(?:TEST_CASE|SCENARIO|TEMPLATE_TEST_CASE)\s*\(\s*"((?:[^"\\]|\\.)*)"')


def offences(root):
    found = []
    for path in sorted(pathlib.Path(root, "test").rglob("*.cpp")):
        text = path.read_text(errors="replace")
        for match in CASE.finditer(text):
            if ";" in match.group(1):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(root)}:{line}: case name has ';': \"{match.group(1)}\"")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        test = pathlib.Path(root, "test", "x")
        test.mkdir(parents=True)
        (test / "ok.cpp").write_text('TEST_CASE("a, b", "[t]") {}\n')
        if offences(root):
            return "a clean name was flagged"
        (test / "bad.cpp").write_text('\nTEST_CASE("a; b", "[t]") {}\n')
        if offences(root) != ['test/x/bad.cpp:2: case name has \';\': "a; b"']:
            return f"a planted ';' was not flagged as expected: {offences(root)}"
    return ""


def main():
    if sys.argv[1:] == ["--self-test"]:
        problem = self_test()
        print(problem or "check_case_names: self-test passed")
        return 1 if problem else 0
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = offences(sys.argv[1])
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
