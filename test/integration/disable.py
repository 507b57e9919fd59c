#!/usr/bin/env python3
"""TREMOR_DISABLE (docs/slurm.md): with Tremor preloaded into a real MPI run,
TREMOR_DISABLE=1 (any value but empty or 0) leaves no file and no output
of Tremor's, and the application's stdout and exit status as without it;
TREMOR_DISABLE=0 records as usual, with no "not a Tremor setting" warning.
Fails a library that ignores the variable, reads "0" as off, or names it
an unknown setting. No Slurm needed (integration.slurm_job adds the site's
TaskProlog).

usage: disable.py --launcher CMD --np N --preload LIB -- PROGRAM ARGS...
"""
import argparse
import os
import sys
import tempfile

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded


def run(opts, out, value):
    env = dict(environment_without_tremor(), LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_DISABLE=value)
    return run_preloaded(mpi_command(opts.launcher, opts.np, launched_program(opts)), env, timeout=120)


def main():
    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    opts = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="tremor-disable-") as tmp:
        plain_env = environment_without_tremor("LD_PRELOAD")
        plain = run_preloaded(mpi_command(opts.launcher, opts.np, launched_program(opts)), plain_env, timeout=120)
        for value in ("1", "yes"):
            out = os.path.join(tmp, "off-" + value)
            os.makedirs(out)
            result = run(opts, out, value)
            if (result.stdout, result.returncode) != (plain.stdout, plain.returncode):
                failures.append(f"TREMOR_DISABLE={value}: stdout/exit {result.returncode} differ from the plain run's "
                                f"{plain.returncode}")
            if "tremor" in result.stderr.lower() or os.listdir(out):
                failures.append(f"TREMOR_DISABLE={value}: files {os.listdir(out)}, stderr {result.stderr[-400:]!r}")
        out = os.path.join(tmp, "on")
        os.makedirs(out)
        result = run(opts, out, "0")
        if result.returncode != 0 or not any(name.endswith(".h5") for name in os.listdir(out)):
            failures.append(f"TREMOR_DISABLE=0: exit {result.returncode}, files {os.listdir(out)}: {result.stderr[-400:]}")
        if "not a Tremor setting" in result.stderr:
            failures.append(f"TREMOR_DISABLE=0 named an unknown setting: {result.stderr[-400:]}")
    for failure in failures:
        print("FAILED " + failure)
    print("TREMOR_DISABLE checks " + ("failed" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
