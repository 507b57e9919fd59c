#!/usr/bin/env python3
"""Mistakes are said at MPI_Init, once for the job, and never change the
application. The program ends with MPI_Abort right after its first iteration,
so whatever Tremor says, it said before the end of the run.

  names       TREMOR_* typos get one warning each, with the setting they were
              meant to be, in the environment and in the TREMOR_CONFIG file;
              names of the settings table, of the injector's table and of the
              tools are not flagged in the environment, and in the file a name
              read from the environment only is said to be ignored there.
  output_dir  TREMOR_OUTPUT_DIR missing or not a directory: one warning that
              says so and names the fallback directory ($TMPDIR), where every
              rank's crash-recovery spill file then is.

usage: early_checks.py --case names|output_dir --launcher CMD --np N --preload LIB -- PROGRAM ARGS...
"""
import argparse
import os
import sys
import tempfile

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded

# Typo -> the setting it should suggest (None: no setting is close).
TYPOS = {
    "TREMOR_OUTPUTDIR": "TREMOR_OUTPUT_DIR",
    "TREMOR_REPROT": "TREMOR_REPORT",
    "TREMOR_SPILL_INTERVALL": "TREMOR_SPILL_INTERVAL",
    "TREMOR_INJECT_MEAN": "TREMOR_INJECT_MEAN_US",
    "TREMOR_BANANA": None,
}
# Names something reads: the settings table, the injector's table, TREMOR_CONFIG and the tools' names.
KNOWN = {"TREMOR_LOG_LEVEL": "info", "TREMOR_INJECT_SEED": "3", "TREMOR_INJECT_CALLS": "p2p",
         "TREMOR_PLOT_TOOL": "/bin/true", "TREMOR_LIBDIR": "/nowhere", "TREMOR_PYTHON": "/usr/bin/python3",
         "TREMOR_MUTANTS_JOBS": "1", "TREMOR_TEST_NEEDS": "perf"}
NOT_A_SETTING = "is not a Tremor setting"
# Lines of the TREMOR_CONFIG file -> what its one warning must say (None: no warning).
FILE_LINES = {
    "TREMOR_SEED=5": None,
    "TREMOR_DETAIL_RANK=4": "TREMOR_CONFIG file: TREMOR_DETAIL_RANK is not a Tremor setting (ignored); "
                            "did you mean TREMOR_DETAIL_RANKS?",
    "TREMOR_INJECT_MODE=sleep": "TREMOR_CONFIG file: TREMOR_INJECT_MODE is read from the environment only",
    "TREMOR_OUTPUTDIR=/nowhere": None,  # set in the environment too: said once, from there
}


def same_as_plain(plain, loaded, failures):
    if loaded.returncode != plain.returncode:
        failures.append(f"exit status {loaded.returncode}, without Tremor {plain.returncode}")
    if sorted(loaded.stdout.splitlines()) != sorted(plain.stdout.splitlines()):
        failures.append(f"stdout differs: {loaded.stdout!r} vs {plain.stdout!r}")


def check_names(command, base_env, top, plain, failures):
    out = os.path.join(top, "out")
    os.mkdir(out)
    config = os.path.join(top, "settings.conf")
    with open(config, "w") as handle:
        handle.write("".join(line + "\n" for line in FILE_LINES))
    env = dict(base_env, LD_PRELOAD=PRELOAD, TREMOR_OUTPUT_DIR=out, TREMOR_CONFIG=config, **KNOWN)
    env.update({typo: "1" for typo in TYPOS})
    loaded = run_preloaded(command, env, timeout=120, cwd=top)
    same_as_plain(plain, loaded, failures)
    warnings = [line for line in loaded.stderr.splitlines() if NOT_A_SETTING in line]
    for typo, meant in TYPOS.items():
        mine = [line for line in warnings if f"{typo} {NOT_A_SETTING}" in line]
        if len(mine) != 1:
            failures.append(f"{typo}: expected one warning for the job, got {mine}")
        elif meant and f"did you mean {meant}?" not in mine[0]:
            failures.append(f"{typo}: no 'did you mean {meant}?' in {mine[0]!r}")
        elif not meant and "did you mean" in mine[0]:
            failures.append(f"{typo}: suggests a setting though none is close: {mine[0]!r}")
    file_warnings = [line for line in loaded.stderr.splitlines() if "TREMOR_CONFIG file:" in line]
    expected = [said for said in FILE_LINES.values() if said]
    for said in expected:
        if len([line for line in file_warnings if said in line]) != 1:
            failures.append(f"expected one warning saying {said!r}, got {file_warnings}")
    if len(file_warnings) != len(expected):
        failures.append(f"expected {len(expected)} warnings of the TREMOR_CONFIG file, got {file_warnings}")
    env_warnings = [line for line in warnings if line not in file_warnings]
    flagged = [line for line in env_warnings for name in list(KNOWN) + ["TREMOR_CONFIG", "TREMOR_OUTPUT_DIR"]
               if f"{name} {NOT_A_SETTING}" in line]
    if flagged or len(env_warnings) != len(TYPOS):
        failures.append(f"expected only the {len(TYPOS)} typos flagged, got {env_warnings}")


def check_output_dir(command, base_env, top, plain, failures):
    fallback = os.path.join(top, "fallback")
    os.mkdir(fallback)
    a_file = os.path.join(top, "a-file")
    open(a_file, "w").close()
    for case, directory in (("missing", os.path.join(top, "missing")), ("a file", a_file)):
        for name in os.listdir(fallback):
            os.remove(os.path.join(fallback, name))
        env = dict(base_env, LD_PRELOAD=PRELOAD, TREMOR_OUTPUT_DIR=directory, TMPDIR=fallback,
                   TREMOR_SPILL_INTERVAL="0")
        loaded = run_preloaded(command, env, timeout=120, cwd=top)
        same_as_plain(plain, loaded, failures)
        said = [line for line in loaded.stderr.splitlines()
                if f"TREMOR_OUTPUT_DIR='{directory}' cannot be written" in line]
        if len(said) != 1 or fallback not in said[0]:
            failures.append(f"{case}: expected one line saying that {directory} cannot be written and naming "
                            f"{fallback}, got {said}; stderr:\n{loaded.stderr}")
        spills = sorted(name for name in os.listdir(fallback) if name.endswith(".spill"))
        ranks = sorted(name.rsplit(".", 2)[-2] for name in spills)
        if ranks != [f"r{rank}" for rank in range(NP)]:
            failures.append(f"{case}: spill files in {fallback}: {spills}, expected one per rank")
        if os.path.exists(os.path.join(top, "missing")):
            failures.append(f"{case}: the missing output directory was created")


def main():
    global PRELOAD, NP
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=["names", "output_dir"])
    add_launch_arguments(parser)
    opts = parser.parse_args()
    PRELOAD, NP = opts.preload, opts.np
    command = mpi_command(opts.launcher, opts.np, launched_program(opts))
    failures = []
    with tempfile.TemporaryDirectory(prefix="tremor-early-") as top:
        base_env = environment_without_tremor("LD_PRELOAD")
        plain = run_preloaded(command, base_env, timeout=120, cwd=top)
        if plain.returncode == 0:
            failures.append("the program was expected to abort, and exited 0 without Tremor")
        (check_names if opts.case == "names" else check_output_dir)(command, base_env, top, plain, failures)
    for failure in failures:
        print("FAILED:", failure)
    print(f"early checks ({opts.case}): {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
