#!/usr/bin/env python3
"""Tremor never changes the run it measures (issue 10 rows).

usage: robustness.py --case CASE --launcher CMD --np N --preload LIB -- PROGRAM ARGS
CASE:
  same-output   stdout and exit status equal with and without Tremor
  bad-outdir    TREMOR_OUTPUT_DIR missing / a regular file: one message naming
                it, the report still printed, application unaffected
  concurrent    two jobs started together in one directory: two complete,
                distinct run files
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

from launch import (add_launch_arguments, environment_without_tremor, launched_program, mpi_command, preloaded,
                    run_preloaded)


def run(command, env):
    return run_preloaded(command, env, timeout=300)


def finish(case, failures):
    """Prints the failures and the case's verdict; exits 1 if any failed."""
    for failure in failures:
        print("FAILED " + failure)
    print(f"{case}: " + ("1 passed, 0 failed" if not failures else "0 passed, 1 failed"))
    sys.exit(1 if failures else 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=["same-output", "bad-outdir", "concurrent"])
    add_launch_arguments(parser)
    opts = parser.parse_args()
    command = mpi_command(opts.launcher, opts.np, launched_program(opts))
    base = environment_without_tremor()
    failures = []
    with tempfile.TemporaryDirectory(prefix="tremor-robust-") as out:
        tremor = dict(base, LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out)
        if opts.case == "same-output":
            plain, loaded = run(command, base), run(command, tremor)
            if (plain.stdout, plain.returncode) != (loaded.stdout, loaded.returncode):
                failures.append(f"output/exit changed: {plain.stdout!r}/{plain.returncode} vs "
                                f"{loaded.stdout!r}/{loaded.returncode}")
        elif opts.case == "bad-outdir":
            plain = run(command, base)
            regular_file = os.path.join(out, "a-file")
            open(regular_file, "w").write("keep me")
            for directory in [os.path.join(out, "missing", "dir"), regular_file]:
                result = run(command, dict(tremor, TREMOR_OUTPUT_DIR=directory))
                if (result.stdout, result.returncode) != (plain.stdout, plain.returncode):
                    failures.append(f"{directory}: application output or exit status changed")
                mentions = [l for l in result.stderr.splitlines() if "TREMOR_OUTPUT_DIR" in l]
                if len(mentions) != 1:
                    failures.append(f"{directory}: expected one message naming TREMOR_OUTPUT_DIR, got {mentions}")
                if "interference report" not in result.stderr:
                    failures.append(f"{directory}: the report was not printed")
            if open(regular_file).read() != "keep me":
                failures.append("an existing file was modified")
        else:
            launched, launched_env = preloaded(command, tremor)
            commands = [subprocess.Popen(launched, env=launched_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                        for _ in range(2)]
            codes = [p.wait(timeout=300) for p in commands]
            files = sorted(glob.glob(os.path.join(out, "*.h5")))
            if codes != [0, 0] or len(files) != 2:
                failures.append(f"exit codes {codes}, files {files}")
            else:
                import h5py
                for path in files:
                    with h5py.File(path, "r") as f:
                        if "segments/duration_s" not in f or f["segments/duration_s"].shape[0] < 2:
                            failures.append(f"{path} is incomplete")
                    if not os.path.getsize(path[:-3] + ".json"):
                        failures.append(f"{path[:-3]}.json is empty")
    finish(opts.case, failures)


if __name__ == "__main__":
    main()
