#!/usr/bin/python3
"""Fails if code outside tremor::json_text turns JSON into text.

Strings in Tremor's JSON come from run files, command lines, host names and
the environment, and may hold bytes that are not UTF-8; nlohmann::json's
dump() throws on those unless told to replace them. json_text
(estimators/json/include/tremor/json_text.hpp) does, so every writer goes
through it: a `.dump(` in the C++ sources of the components (tests aside) is
an offence, printed as file:line.

    check_one_json_writer.py [ROOT]     (default: the repository holding this script)
    check_one_json_writer.py --self-test
"""

import argparse
import pathlib
import re
import sys
import tempfile

COMPONENTS = ("interpose", "counters", "segments", "estimators", "injector")
WRITER = pathlib.Path("estimators/json/include/tremor/json_text.hpp")
DUMP = re.compile(r"\.\s*dump\s*\(")


def offences(root):
    found = []
    for component in COMPONENTS:
        for path in sorted((root / component).rglob("*")):
            if path.suffix not in (".cpp", ".hpp", ".h", ".cc") or path.relative_to(root) == WRITER:
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if DUMP.search(line.split("//")[0]):
                    found.append(f"{path.relative_to(root)}:{number}: JSON written without tremor::json_text")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / WRITER).parent.mkdir(parents=True)
        (root / WRITER).write_text("return value.dump(indent, ' ', false, replace);\n")
        (root / "estimators/cli").mkdir(parents=True)
        (root / "estimators/cli/good.cpp").write_text("std::cout << json_text(out, 2);  // not .dump( here\n")
        if offences(root):
            return "a clean tree was flagged: " + str(offences(root))
        (root / "interpose/x.cpp").parent.mkdir(parents=True)
        (root / "interpose/x.cpp").write_text("write(report.dump(2));\n")
        if offences(root) != ["interpose/x.cpp:1: JSON written without tremor::json_text"]:
            return "a planted dump() was not flagged: " + str(offences(root))
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parents[2])
    parser.add_argument("--self-test", action="store_true")
    opts = parser.parse_args()
    if opts.self_test:
        failure = self_test()
        print(failure or "self-test passed")
        return 1 if failure else 0
    found = offences(pathlib.Path(opts.root))
    print("\n".join(found) if found else "every JSON writer uses tremor::json_text")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
