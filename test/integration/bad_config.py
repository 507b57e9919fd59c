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
import sys
import tempfile

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_SOURCE = os.path.join(HERE, "..", "..", "config", "src", "config.cpp")
# Values no setting accepts: each must produce one message naming the variable.
UNPARSEABLE = "@@not-a-value@@\x01"
VALUES = ["@@garbage@@", "", "-5", "99999999999999999999999", "1e309"]


def settings():
    return re.findall(r'Setting\{"(TREMOR_\w+)"', open(CONFIG_SOURCE).read())


def run(command, env):
    return run_preloaded(command, env, timeout=120)


def main():
    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    opts = parser.parse_args()
    command = mpi_command(opts.launcher, opts.np, launched_program(opts))
    base_env = environment_without_tremor()
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
