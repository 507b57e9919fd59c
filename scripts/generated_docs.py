#!/usr/bin/env python3
"""Checks or rewrites the documentation generated from Tremor's tables.

usage: generated_docs.py --tremor PATH [--root DIR] (--check | --write)

Generated text:
  README.md, injector/README.md, scripts/README.md   the Markdown between
        <!-- BEGIN GENERATED: tremor config --markdown profiler|injector|exit-codes -->
        <!-- END GENERATED -->
      is the output of that command (the settings tables and the exit statuses
      in code); README.md must hold all three regions, the others may hold any.
  docs/intercepted_calls.md       interpose/generate_wrappers.py docs (the call table).
--check prints a diff per stale file and how to fix it, and exits 1 when any
file is stale or a required region is missing; --write rewrites the files.
Standard library only.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

TABLES = ("profiler", "injector", "exit-codes")
BEGIN = re.compile(r"^<!-- BEGIN GENERATED: tremor config --markdown (profiler|injector|exit-codes) -->$")
END = "<!-- END GENERATED -->"
# (file, tables it must hold); the others are filled where present.
MARKDOWN_FILES = [("README.md", set(TABLES)), ("injector/README.md", set()), ("scripts/README.md", set())]
FIX = "scripts/update-generated-docs.sh <build-dir>"


class Stale(Exception):
    pass


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise Stale(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def fill_regions(path, text, tables, required):
    """text with every marker region replaced by its table; checks the markers pair up."""
    lines = text.split("\n")
    out, seen, index = [], set(), 0
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        match = BEGIN.match(line.strip())
        if not match:
            if line.strip() == END:
                raise Stale(f"{path}:{index}: {END} without a BEGIN GENERATED line")
            continue
        table = match.group(1)
        end = next((i for i in range(index, len(lines)) if lines[i].strip() == END), None)
        if end is None or any(BEGIN.match(lines[i].strip()) for i in range(index, end)):
            raise Stale(f"{path}:{index}: the region for '{table}' has no {END} line of its own")
        out += tables[table].rstrip("\n").split("\n")
        out.append(lines[end])
        seen.add(table)
        index = end + 1
    missing = sorted(required - seen)
    if missing:
        raise Stale(f"{path} lacks the generated region(s) {missing}: add the lines "
                    + " / ".join(f"'<!-- BEGIN GENERATED: tremor config --markdown {t} -->' ... '{END}'"
                                 for t in missing))
    return "\n".join(out)


def expected_files(root, tremor):
    tables = {table: run([tremor, "config", "--markdown", table]) for table in TABLES}
    files = {}
    for name, required in MARKDOWN_FILES:
        path = os.path.join(root, name)
        if not os.path.exists(path):
            if required:
                raise Stale(f"{name} does not exist")
            continue
        with open(path, encoding="utf-8") as stream:
            current = stream.read()
        files[name] = (current, fill_regions(name, current, tables, required))
    generator = os.path.join(root, "interpose", "generate_wrappers.py")
    calls_path = os.path.join(root, "docs", "intercepted_calls.md")
    current = open(calls_path, encoding="utf-8").read() if os.path.exists(calls_path) else ""
    files["docs/intercepted_calls.md"] = (current, run([sys.executable, generator, "docs", "-"]))
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True, help="the tremor command-line tool of a build")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    opts = parser.parse_args()
    try:
        files = expected_files(opts.root, opts.tremor)
    except Stale as problem:
        print(f"generated docs: {problem}", file=sys.stderr)
        return 1
    stale = [name for name, (current, wanted) in files.items() if current != wanted]
    if opts.write:
        for name in stale:
            with open(os.path.join(opts.root, name), "w", encoding="utf-8") as stream:
                stream.write(files[name][1])
        print(f"rewrote {', '.join(stale)}" if stale else "generated docs already current")
        return 0
    for name in stale:
        current, wanted = files[name]
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), wanted.splitlines(True),
                                                   f"{name} (in the tree)", f"{name} (generated from the tables)"))
    if stale:
        print(f"\ngenerated docs are stale: {', '.join(stale)}. Fix: {FIX}", file=sys.stderr)
        return 1
    print(f"generated docs current: {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
