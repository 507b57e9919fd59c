"""Runs one `tremor` command and checks its exit status, stderr and stdout.

usage: cli_check.py --expect ok|fail [--stderr REGEX] [--stdout REGEX]
                    [--json-keys a,b,...] [--stdin FILE] -- COMMAND...
Every run also checks that no NaN/inf is printed and that no crash
(signal / internal error) happened.
"""
import argparse
import json
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", choices=["ok", "fail"], required=True)
    parser.add_argument("--stderr")
    parser.add_argument("--stdout")
    parser.add_argument("--json-keys")
    parser.add_argument("--stdin")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    stdin = open(args.stdin, "rb") if args.stdin else subprocess.DEVNULL
    result = subprocess.run(command, stdin=stdin, capture_output=True, text=True, timeout=60)
    problems = []
    if result.returncode < 0:
        problems.append(f"killed by signal {-result.returncode}")
    if args.expect == "ok" and result.returncode != 0:
        problems.append(f"exit status {result.returncode}, expected 0")
    if args.expect == "fail" and (result.returncode in (0, 70) or result.returncode < 0):
        problems.append(f"exit status {result.returncode}, expected a clean non-zero failure")
    if args.stderr and not re.search(args.stderr, result.stderr):
        problems.append(f"stderr does not match {args.stderr!r}")
    if args.stdout and not re.search(args.stdout, result.stdout):
        problems.append(f"stdout does not match {args.stdout!r}")
    if re.search(r"\b(nan|inf)\b", result.stdout, re.IGNORECASE):
        problems.append("NaN or inf printed")
    if args.json_keys:
        try:
            document = json.loads(result.stdout)
            missing = [key for key in args.json_keys.split(",") if key not in document]
            if missing:
                problems.append(f"JSON lacks {missing}")
        except json.JSONDecodeError as error:
            problems.append(f"stdout is not JSON: {error}")
    if problems:
        print("command:", " ".join(command))
        print("exit:", result.returncode)
        print("stdout:", result.stdout)
        print("stderr:", result.stderr)
        print("\n".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
