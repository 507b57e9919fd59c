#!/usr/bin/env python3
"""The wrong library preloaded never harms the application: a program built
with the other MPI (its own compiler wrapper, its own launcher) and run with
this build's libtremor preloaded gives the same exit status, the same stdout
and the same stderr as without Tremor, plus exactly one line on stderr that
names both MPIs and the right library file; no file is written.

Without the check (Tremor passing this build's handle constants to the other
MPI) the run crashes (SIGSEGV in MPI_Comm_rank) or records into a file.

usage: wrong_mpi_preload.py --launcher CMD --np N --preload LIB --built mpich|openmpi
                            --runs openmpi|mpich [--expect-exit S] [--expect-lines N]
                            [--linked-from PLAIN_PROGRAM] -- PROGRAM ARGS...
PROGRAM ARGS may contain {scratch}: a file path the program may create and remove.
"""
import argparse
import os
import re
import sys
import tempfile

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded

NAMES = {"mpich": "MPICH", "openmpi": "Open MPI"}
LIBRARIES = {"mpich": "libtremor-mpich.so", "openmpi": "libtremor-openmpi.so"}


def masked(lines):
    """Launcher messages carry job ids and process ids: compare them with digits masked."""
    return [re.sub(r"\d+", "N", line) for line in lines]


def main():
    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    parser.add_argument("--built", required=True, choices=sorted(NAMES))
    parser.add_argument("--runs", required=True, choices=sorted(NAMES))
    parser.add_argument("--expect-exit", type=int, default=0, help="the program's exit status without Tremor")
    parser.add_argument("--expect-lines", type=int, default=0, help="its lines on stdout without Tremor")
    parser.add_argument("--linked-from", metavar="PLAIN_PROGRAM",
                        help="PROGRAM has the library linked in (no LD_PRELOAD; Tremor cannot start it again and "
                             "forwards every call); the run without Tremor is PLAIN_PROGRAM, built from the same source")
    opts = parser.parse_args()
    if opts.built == opts.runs:
        sys.exit("--built and --runs must differ: this test preloads the wrong library")
    failures = []
    with tempfile.TemporaryDirectory(prefix="tremor-wrong-mpi-") as top:
        scratch_dir = os.path.join(top, "scratch")
        out = os.path.join(top, "out")
        os.mkdir(scratch_dir)
        os.mkdir(out)
        program = [arg.replace("{scratch}", os.path.join(scratch_dir, "file")) for arg in launched_program(opts)]
        command = mpi_command(opts.launcher, opts.np, program)
        plain_command = mpi_command(opts.launcher, opts.np, [opts.linked_from] + program[1:]) if opts.linked_from \
            else command
        base_env = environment_without_tremor("LD_PRELOAD")
        plain = run_preloaded(plain_command, base_env, timeout=120, cwd=out)
        env = dict(base_env, TREMOR_OUTPUT_DIR=out, TREMOR_LOG_LEVEL="debug", TREMOR_SPILL_INTERVAL="0")
        if not opts.linked_from:
            env["LD_PRELOAD"] = opts.preload
        loaded = run_preloaded(command, env, timeout=120, cwd=out)
        if loaded.returncode != plain.returncode:
            failures.append(f"exit status {loaded.returncode}, without Tremor {plain.returncode}")
        # Ranks print in any order: the same lines, in any order.
        if sorted(loaded.stdout.splitlines()) != sorted(plain.stdout.splitlines()):
            failures.append(f"stdout differs:\n{loaded.stdout!r}\nwithout Tremor:\n{plain.stdout!r}")
        tremor_lines = [line for line in loaded.stderr.splitlines() if line.startswith("[tremor]")]
        others = [line for line in loaded.stderr.splitlines() if not line.startswith("[tremor]")]
        if sorted(masked(others)) != sorted(masked(plain.stderr.splitlines())):
            failures.append(f"stderr beside Tremor's line differs:\n{loaded.stderr!r}\nwithout Tremor:\n{plain.stderr!r}")
        if len(tremor_lines) != 1:
            failures.append(f"expected one [tremor] line for the job, got {tremor_lines}")
        else:
            line = tremor_lines[0]
            for needed in (NAMES[opts.runs], NAMES[opts.built], LIBRARIES[opts.runs], LIBRARIES[opts.built]):
                if needed not in line:
                    failures.append(f"the line does not name {needed!r}: {line}")
        if os.listdir(out):
            failures.append(f"files written: {sorted(os.listdir(out))}")
        if plain.returncode != opts.expect_exit or len(plain.stdout.splitlines()) != opts.expect_lines:
            failures.append(f"the run without Tremor did not run as expected (exit {plain.returncode}): "
                            f"{plain.stdout!r} {plain.stderr!r}")
    for failure in failures:
        print("FAILED:", failure)
    print(f"{LIBRARIES[opts.built]} {'linked' if opts.linked_from else 'preloaded'} into a {NAMES[opts.runs]} program: "
          f"{'failed' if failures else 'inert and explained'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
