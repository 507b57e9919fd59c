#!/usr/bin/env python3
"""Bad TREMOR_* values never change the application: for every setting of the
configuration table and each of garbage / empty / negative / huge values, the
program's stdout and exit status are byte-identical to a run without Tremor,
and an unparseable value gets exactly one message naming the variable (on
rank 0 only).

usage: bad_config.py --launcher CMD --np N --preload LIB -- PROGRAM ARGS...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from launch import mpi_command, preloaded  # same folder

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_SOURCE = os.path.join(HERE, "..", "..", "segments", "config.cpp")
# Values no setting accepts: each must produce one message naming the variable.
UNPARSEABLE = "@@not-a-value@@\x01"
VALUES = ["@@garbage@@", "", "-5", "99999999999999999999999", "1e309"]


def settings():
    return re.findall(r'Setting\{"(TREMOR_\w+)"', open(CONFIG_SOURCE).read())


def run(command, env):
    command, env = preloaded(command, env)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--preload", required=True)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    program = opts.program[1:] if opts.program[:1] == ["--"] else opts.program
    command = mpi_command(opts.launcher, opts.np, program)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_")}
    baseline = run(command, base_env)
    failures = []
    failed_cases = set()
    names = settings()
    if len(names) < 10:
        sys.exit(f"only {len(names)} settings found in {CONFIG_SOURCE}")
    with tempfile.TemporaryDirectory(prefix="tremor-badcfg-") as out:
        for name in names:
            for value in VALUES + [UNPARSEABLE]:
                env = dict(base_env, LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none")
                env[name] = value
                result = run(command, env)
                label = f"{name}={value!r}"
                before = len(failures)
                if result.stdout != baseline.stdout or result.returncode != baseline.returncode:
                    failures.append(f"{label}: stdout/exit status changed ({result.returncode} vs {baseline.returncode})")
                if value == UNPARSEABLE:
                    mentions = [line for line in result.stderr.splitlines() if name in line]
                    if len(mentions) != 1:
                        failures.append(f"{label}: expected one message naming {name}, got {mentions}")
                if len(failures) > before:
                    failed_cases.add(label)
    for failure in failures:
        print("FAILED " + failure)
    cases = len(names) * (len(VALUES) + 1)
    print(f"{cases - len(failed_cases)} passed, {len(failed_cases)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
