"""tremor-run: options, MPI detection, library choice, LD_PRELOAD order, full run.

usage: check_launcher.py --tremor-run PATH --build-flavour F --app-flavour F --app PATH
                         --launcher "mpiexec flags" --profiler LIB --injector LIB
  With app flavour == build flavour the app is also run under the launcher
  through tremor-run; otherwise the clear "not built for" message is checked.
"""
import argparse
import tempfile

import h5py

from ux_common import check, finish, mpi_run, run, single_run_file

EXIT_USAGE, EXIT_NOT_MPI, EXIT_NO_LIBRARY = 2, 3, 4

parser = argparse.ArgumentParser()
for option in ("--tremor-run", "--build-flavour", "--app-flavour", "--app", "--launcher", "--profiler",
               "--injector"):
    parser.add_argument(option, required=True)
options = parser.parse_args()
launcher_script = options.tremor_run
clean_env = {"LD_PRELOAD": None, "TREMOR_LIBDIR": None}


def env_lines(stdout):
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


# Detection of an MPI that this build has no library for: one clear line, exit 4.
with tempfile.TemporaryDirectory() as empty_dir:
    result = run([launcher_script, options.app, "--print-env"], {**clean_env, "TREMOR_LIBDIR": empty_dir})
    check(result.returncode == EXIT_NO_LIBRARY, f"empty TREMOR_LIBDIR: exit {EXIT_NO_LIBRARY}, got {result.returncode}")
    check(f"links {options.app_flavour} (" in result.stderr, f"message names the app's MPI: {result.stderr!r}")
    check(f"libtremor-{options.app_flavour}.so" in result.stderr, "message names the missing library")
    check("LD_PRELOAD" not in result.stdout, "the application was not started")

if options.app_flavour != options.build_flavour:
    # The default library folder holds only this build's flavour.
    result = run([launcher_script, options.app, "--print-env"], clean_env)
    check(result.returncode == EXIT_NO_LIBRARY, f"other flavour: exit {EXIT_NO_LIBRARY}, got {result.returncode}")
    check(f"links {options.app_flavour} (" in result.stderr, f"detected {options.app_flavour}: {result.stderr!r}")
    check(f"built for: {options.build_flavour}" in result.stderr, "message says which flavour Tremor has")
    finish("check_launcher")

# Same flavour: the profiler (then the injector) is appended to an existing LD_PRELOAD.
result = run([launcher_script, "--inject", "mean=3000,sd=500,p=0.5,calls=p2p,coll,ranks=1,seed=9",
              "--report", "json", "--counters", "cputime", "--", options.app, "--print-env"],
             {**clean_env, "LD_PRELOAD": "libm.so.6"})
check(result.returncode == 0, f"--print-env through tremor-run: exit 0, got {result.returncode}: {result.stderr}")
seen = env_lines(result.stdout)
check(seen.get("LD_PRELOAD", "").split() == ["libm.so.6", options.profiler, options.injector],
      f"LD_PRELOAD = existing + profiler + injector, got {seen.get('LD_PRELOAD')!r}")
expected = {"TREMOR_INJECT_MEAN_US": "3000", "TREMOR_INJECT_SD_US": "500", "TREMOR_INJECT_PROBABILITY": "0.5",
            "TREMOR_INJECT_CALLS": "p2p,coll", "TREMOR_INJECT_RANKS": "1", "TREMOR_INJECT_SEED": "9",
            "TREMOR_REPORT": "json", "TREMOR_COUNTERS": "cputime"}
for key, value in expected.items():
    check(seen.get(key) == value, f"{key}={value}, got {seen.get(key)!r}")

# A full run under the launcher: run file of this flavour, injected delays only on rank 1.
with tempfile.TemporaryDirectory() as output_dir:
    result = mpi_run(options.launcher, 2, [launcher_script, "--output-dir", output_dir, "--report", "json",
                                           "--inject", "mean=2000,sd=200,p=0.5,calls=coll,ranks=1,seed=4",
                                           options.app, "30"], clean_env)
    check(result.returncode == 0, f"full run: exit 0, got {result.returncode}: {result.stderr[-2000:]}")
    check("ux_mpi_app: 30 allreduces" in result.stdout, "the application ran to completion")
    check('"interference_percent"' in result.stderr, "--report json: JSON report on stderr")
    check("% of this run was lost" not in result.stderr, "--report json: no text report")
    run_file = single_run_file(output_dir)
    if run_file:
        with h5py.File(run_file, "r") as handle:
            check(bytes(handle.attrs["mpi_flavour"]).decode() == options.build_flavour, "run file has this build's flavour")
            check(int(handle.attrs["world_size"]) == 2, "two processes recorded")
            check(len(handle["segments/duration_s"]) >= 30, "one segment per allreduce")
            ranks = handle["injection/rank"][()]
            check(len(ranks) > 0 and set(ranks.tolist()) == {1}, f"delays injected on rank 1 only: {ranks}")
finish("check_launcher")
