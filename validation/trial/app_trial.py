#!/usr/bin/python3
"""A first user's trial of a packaged application (issue 48's "Done when"):

  clean     N runs with nothing planted: the default report fits 25 lines
            and names no rank
  planted   N runs with delays on one rank (run number mod 2): the injector
            in front of the profiler sleeps 3 +- 1 ms before half of that
            rank's collectives; the report names that rank first
  wrong     one run with the other flavour's library preloaded, one without
            Tremor: same exit status, as many output lines and the same
            result lines (thermodynamic rows, SCF energy), one explaining
            line from Tremor and no run file

and the in-run analysis time of every run: the "analysis + report" seconds
of the profiler's own finalize log line (TREMOR_LOG_LEVEL=debug), against
the bound max(1 s, 5 % of the run).

Truth: the planted rank is the one the injector's logs hold delays for (it
must be the only one); never Tremor's output. The injector runs in front of
the profiler in the clean runs too, planting nothing and logging each rank's
run-queue delay at every collective: beside a clean run that names a rank,
the summary shows each rank's excess over an equal share of the machine's
own delay as the kernel counted it (scripts/injected_path.machine_path_ranks).

usage: app_trial.py --app lammps --build OMPI_BUILD --other-build MPICH_BUILD
                    [--runs N] [--output DIR]
Writes DIR/runs.csv and DIR/summary.md and prints the summary; exits 1 when
a check fails.
"""
import argparse
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPOSITORY, "validation", "campaigns"))
import injected_truth  # noqa: E402
sys.path.insert(0, os.path.join(REPOSITORY, "scripts"))
import injected_path  # noqa: E402

import h5py  # noqa: E402

DELAY = {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.5",
         "TREMOR_INJECT_MEAN_US": "3000", "TREMOR_INJECT_SD_US": "1000"}
# application: (MPI flavour of the Debian package, command, input files,
# the lines of its output that carry the result: the thermodynamic rows, the
# SCF energy)
APPS = {
    "lammps": ("openmpi", ["lmp", "-in", "in.melt"], [os.path.join(REPOSITORY, "validation/analysis-time/in.melt")],
               re.compile(r"^\s+\d+\s+-?\d+\.\d+\s+-?\d+\.\d+")),
    "nwchem": ("mpich", ["nwchem.mpich", "water_scf.nw"], [os.path.join(REPOSITORY, "validation/where/water_scf.nw")],
               re.compile(r"Total SCF energy")),
}
# The application's own settings. Debian 12's nwchem.mpich (ARMCI-MPI over
# MPICH 4.0) computes a wrong SCF on 2 ranks and aborts ("sym_movecs_adapt:
# negative proj") with windows from MPI_Win_allocate; MPI_Win_create works.
APP_ENV = {"nwchem": {"ARMCI_USE_WIN_ALLOCATE": "0"}}
REPORT_START = "=== Tremor: interference report"
FINALIZE = re.compile(r"analysis \+ report ([0-9.]+) s")


def launcher(flavour):
    if flavour == "mpich":
        return ["mpiexec.mpich", "-n", "2"]
    return ["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-n", "2",
            "-x", "OMP_NUM_THREADS=1"]


def prepare(out, inputs):
    os.makedirs(out)
    for path in inputs:
        shutil.copy(path, out)
    for scratch in ("scratch", "perm"):
        os.makedirs(os.path.join(out, scratch))


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_")}
    env.update(extra)
    return env


def run(command, env, cwd):
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)


def report_lines(text):
    """The default report's lines on the screen (the block from its title)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(REPORT_START)]
    if not starts:
        return None
    return len([line for line in lines[starts[0]:] if not line.startswith("[tremor]")])


def profiled_run(app, build, kind, run_number, work, tremor):
    flavour, command, inputs, _ = APPS[app]
    out = os.path.join(work, f"{kind}-{run_number}")
    prepare(out, inputs)
    preload = [os.path.join(build, "interpose", f"libtremor-{flavour}.so")]
    settings = {"TREMOR_OUTPUT_DIR": out, "TREMOR_LOG_LEVEL": "debug", **APP_ENV.get(app, {})}
    planted = None
    # The injector in front of the profiler in every run: it plants the
    # delays of the planted runs and, in all, logs each rank's run-queue
    # delay at every collective (the kernel's count of the machine's own
    # interference, per rank).
    preload.insert(0, os.path.join(build, "injector", f"libtremor-inject-{flavour}.so"))
    settings.update(injected_truth.TRACE_SETTINGS, TREMOR_INJECT_PROBABILITY="0")
    if kind == "planted":
        planted = run_number % 2
        settings.update(DELAY, TREMOR_INJECT_RANKS=str(planted), TREMOR_INJECT_SEED=str(9100 + run_number))
    settings["LD_PRELOAD"] = " ".join(preload)
    exports = [item for key in settings for item in ("-x", key)] if flavour == "openmpi" else []
    result = run(launcher(flavour) + exports + command, clean_env(settings), out)
    if result.returncode != 0:
        raise RuntimeError(f"{kind} {run_number}: exit {result.returncode}: {result.stderr[-1500:]}")
    path = glob.glob(os.path.join(out, "*.h5"))[0]
    with h5py.File(path, "r") as h5:
        delayed = sorted(set(injected_truth.delays(h5)["rank"].tolist()))
        machine = injected_path.machine_path_ranks(h5)
    if delayed != ([] if planted is None else [planted]):
        raise RuntimeError(f"{kind} {run_number}: the injector delayed ranks {delayed}, planted {planted}")
    analysed = subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True, timeout=600)
    report = json.loads(analysed.stdout)
    diagnosis = report.get("diagnosis") or {}
    named = [r["rank"] for r in diagnosis.get("slow_ranks") or []]
    timing = FINALIZE.search(result.stderr)
    analysis_s = float(timing.group(1)) if timing else float("nan")
    lines = report_lines(result.stdout + "\n" + result.stderr)
    right = (bool(named) and named[0] == planted) if planted is not None else not named
    bound_s = max(1.0, 0.05 * report["run_time_s"])
    # Each rank's share beyond an equal one, % of the run: of the lost time as
    # Tremor charged it, and of the machine's own delay as the kernel counted
    # it, on the critical path (the low bound) and in the run queue.
    run_s = report["run_time_s"]
    ranks = sorted(machine) if machine else []
    path_excess = injected_path.excess_text([100.0 * machine[r][0] / run_s for r in ranks])
    queue_excess = injected_path.excess_text([100.0 * machine[r][1] / run_s for r in ranks])
    tremor_excess = injected_path.excess_text(diagnosis.get("ranks", {}).get("lost_percent") or [])
    return {"app": app, "kind": kind, "run": run_number, "planted_rank": "" if planted is None else planted,
            "named_ranks": " ".join(map(str, named)), "right": int(right), "report_lines": lines,
            "run_time_s": report["run_time_s"], "analysis_s": analysis_s, "bound_s": bound_s,
            "in_bound": int(analysis_s <= bound_s), "interference_percent": report["interference_percent"],
            "class": report["class"], "tremor_rank_excess_pp": tremor_excess, "kernel_path_excess_pp": path_excess,
            "kernel_queue_excess_pp": queue_excess, "load_1min": os.getloadavg()[0]}


def same_output(plain, wrong, result):
    """The same number of lines and the same result lines: the rest holds
    clock readings, memory addresses and rounding noise that differ between
    any two runs."""
    plain_lines, wrong_lines = plain.splitlines(), wrong.splitlines()
    results = [[line for line in lines if result.search(line)] for lines in (plain_lines, wrong_lines)]
    return len(plain_lines) == len(wrong_lines) and results[0] == results[1] and len(results[0]) > 0


def wrong_library_run(app, other_build, work):
    flavour, command, inputs, result = APPS[app]
    other = "mpich" if flavour == "openmpi" else "openmpi"
    outcomes = {}
    for kind, preload in (("plain", None), ("wrong", os.path.join(other_build, "interpose", f"libtremor-{other}.so"))):
        out = os.path.join(work, kind)
        prepare(out, inputs)
        settings = {"TREMOR_OUTPUT_DIR": out, **APP_ENV.get(app, {})}
        if preload:
            settings["LD_PRELOAD"] = preload
        exports = [item for key in settings for item in ("-x", key)] if flavour == "openmpi" else []
        outcomes[kind] = (run(launcher(flavour) + exports + command, clean_env(settings), out), out)
        with open(os.path.join(out, "stdout.txt"), "w") as sink:
            sink.write(outcomes[kind][0].stdout)
    plain, wrong = outcomes["plain"][0], outcomes["wrong"][0]
    tremor_lines = [line for line in wrong.stderr.splitlines() if line.startswith("[tremor]")]
    return {"app": app, "kind": "wrong_library", "plain_exit": plain.returncode, "wrong_exit": wrong.returncode,
            "same_exit": int(plain.returncode == wrong.returncode),
            "same_output": int(same_output(plain.stdout, wrong.stdout, result)),
            "tremor_lines": len(tremor_lines), "tremor_line": tremor_lines[0] if tremor_lines else "",
            "files_written": len(glob.glob(os.path.join(outcomes["wrong"][1], "*.h5")))}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", choices=sorted(APPS), required=True)
    parser.add_argument("--build", required=True, help="the build of the application's MPI flavour")
    parser.add_argument("--other-build", required=True, help="the other flavour's build (wrong-library run)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--output", default="trial")
    args = parser.parse_args()
    build, other_build = os.path.abspath(args.build), os.path.abspath(args.other_build)
    tremor = os.path.join(build, "estimators", "tremor")
    work = os.path.join(os.path.abspath(args.output), "runs")
    shutil.rmtree(work, ignore_errors=True)
    rows = [profiled_run(args.app, build, kind, n, work, tremor)
            for kind in ("clean", "planted") for n in range(args.runs)]
    wrong = wrong_library_run(args.app, other_build, work)
    with open(os.path.join(args.output, "runs.csv"), "w", newline="") as sink:
        writer = csv.DictWriter(sink, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    failures = []
    lines = [f"# {args.app}: a first user's trial", "",
             "| runs | right | report lines (most) | analysis s (median, most) | within max(1 s, 5 % of the run) |",
             "|---|---|---|---|---|"]
    for kind in ("clean", "planted"):
        mine = [r for r in rows if r["kind"] == kind]
        times = sorted(r["analysis_s"] for r in mine)
        right, within = sum(r["right"] for r in mine), sum(r["in_bound"] for r in mine)
        most_lines = max(r["report_lines"] or 999 for r in mine)
        lines.append(f"| {kind} ({len(mine)}) | {right}/{len(mine)} | {most_lines} | "
                     f"{times[len(times) // 2]:.2f}, {times[-1]:.2f} | {within}/{len(mine)} |")
        if right < len(mine):
            failures.append(f"{kind}: right in {right} of {len(mine)}")
        if most_lines > 25:
            failures.append(f"{kind}: a report of {most_lines} lines")
        if within < len(mine):
            failures.append(f"{kind}: analysis within the bound in {within} of {len(mine)}")
    for r in rows:
        if r["kind"] == "clean" and r["named_ranks"]:
            lines.append(f"- clean run {r['run']} names rank {r['named_ranks']}: its excess over an equal share "
                         f"(pp of the run, per rank) read by Tremor {r['tremor_rank_excess_pp']}, by the kernel "
                         f"on the critical path {r['kernel_path_excess_pp']}, in the run queue "
                         f"{r['kernel_queue_excess_pp']}")
    lines += ["", f"Wrong library: exit {wrong['plain_exit']} without Tremor, {wrong['wrong_exit']} with the other "
              f"flavour's library; same output lines: {'yes' if wrong['same_output'] else 'no'}; "
              f"Tremor's lines: {wrong['tremor_lines']}; run files written: {wrong['files_written']}.", "",
              f"> {wrong['tremor_line']}"]
    if not (wrong["same_exit"] and wrong["same_output"] and wrong["tremor_lines"] == 1 and not wrong["files_written"]):
        failures.append("wrong library: the run was not left as it runs without Tremor")
    summary = "\n".join(lines) + "\n"
    with open(os.path.join(args.output, "summary.md"), "w") as sink:
        sink.write(summary)
    print(summary)
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
