#!/usr/bin/python3
"""Fails if any file of the repository names a path outside it.

The repository must build, test and read on its own: no build file, test,
script, source file or document may point at a sibling directory of the
checkout, at an absolute workplace path, or at notes that live outside it.
The files checked are those git lists (tracked, plus untracked ones that are
not ignored); without git, a walk of the tree that skips build trees.
Each offence is printed as file:line: reason.

    check_self_contained.py [ROOT]     (default: the repository holding this script)
    check_self_contained.py --self-test
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Spelled in pieces so that this file does not name them itself.
FORBIDDEN_TEXT = [
    (".." + "/shared", "names the directory beside the checkout"),
    ("/" + "work/", "names an absolute workplace path"),
    ("shared" + "/reference", "names reference data outside the repository"),
    ("STATISTICS" + ".md", "names a document outside the repository"),
    ("DESIGN" + ".md", "names a document outside the repository"),
    ("STYLE" + ".md", "names a document outside the repository"),
    ("ESTIMATION" + "-NOTES", "names a document outside the repository"),
]
# A path-like token with at least one "/" (CMake variables allowed in it).
PATH_TOKEN = re.compile(r"[\w.${}@+-]*(?:/[\w.${}@+-]*)+")
ROOT_VARIABLES = {"CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR", "tremor_SOURCE_DIR"}
FILE_DIR_VARIABLES = {"CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR"}


def climbs_out(token, depth):
    """True if `token`, read from a directory `depth` levels below the root, leaves the root."""
    parts = token.split("/")
    if ".." not in parts:
        return False
    first = parts[0]
    variable = re.fullmatch(r"\$\{(\w+)\}", first)
    if variable:
        if variable.group(1) in ROOT_VARIABLES:
            depth = 0
        elif variable.group(1) not in FILE_DIR_VARIABLES:
            return False  # build directories and the like: not the source tree
        parts = parts[1:]
    elif first == "":
        return False  # absolute: only the named prefixes above are checked
    for part in parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def listed_files(root):
    if (root / ".git").exists():
        try:
            out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                                  "--exclude-standard"], check=True, capture_output=True).stdout
            names = sorted(set(filter(None, out.decode().split("\0"))))
            return [root / name for name in names if (root / name).is_file()]
        except (OSError, subprocess.CalledProcessError):
            pass
    files = []
    for directory, subdirectories, names in os.walk(root):
        # Skip git's own data and build trees (they hold absolute paths by design).
        subdirectories[:] = sorted(d for d in subdirectories if d != ".git"
                                   and not (pathlib.Path(directory) / d / "CMakeCache.txt").exists())
        files += [pathlib.Path(directory) / name for name in sorted(names)]
    return files


def offences(root):
    root = root.resolve()
    found = []
    for path in listed_files(root):
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        relative = path.relative_to(root)
        depth = len(relative.parts) - 1
        for number, line in enumerate(text.splitlines(), start=1):
            reasons = [reason for needle, reason in FORBIDDEN_TEXT if needle in line]
            reasons += [f"'{token}' climbs out of the repository" for token in PATH_TOKEN.findall(line)
                        if climbs_out(token, depth)]
            found += [f"{relative}:{number}: {reason}" for reason in reasons]
    return found


def self_test():
    """The check must flag each kind of offence and pass a clean tree."""
    planted = {
        "CMakeLists.txt": "set(DATA ${CMAKE_SOURCE_DIR}" + "/../" + "shared/data)\n",
        "docs/a.md": "See [notes](../../elsewhere/notes.md).\n",
        "docs/b.md": "Read /" + "work/main/README.md\n",
        "src/c.cpp": "// see STATISTICS" + ".md\n",
    }
    clean = {
        "CMakeLists.txt": "add_subdirectory(src)\n",
        "docs/a.md": "See [schema](../docs/schema.md) and [x](./x.md); j = 1..n.\n",
        "src/c.cpp": '#include "../include/c.hpp"\n',
        "src/CMakeLists.txt": "set(D ${CMAKE_CURRENT_SOURCE_DIR}/../docs)\n",
    }
    with tempfile.TemporaryDirectory() as scratch:
        for tree, files in (("planted", planted), ("clean", clean)):
            for name, text in files.items():
                target = pathlib.Path(scratch, tree, name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        flagged = {line.split(":")[0] for line in offences(pathlib.Path(scratch, "planted"))}
        clean_result = offences(pathlib.Path(scratch, "clean"))
    missed = sorted(set(planted) - flagged)
    if missed or clean_result:
        print(f"self-test failed: missed {missed}, false alarms {clean_result}")
        return 1
    print(f"self-test passed: {len(planted)} planted offences flagged, the clean tree passes")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[2])
    parser.add_argument("--self-test", action="store_true", help="check the checker on planted offences")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    found = offences(args.root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} reference(s) to paths outside the repository")
        return 1
    print("the repository names no path outside itself")
    return 0


if __name__ == "__main__":
    sys.exit(main())
