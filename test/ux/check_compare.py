"""`tremor compare` on planted runs of bsp_demo, and its errors on bad input.

usage: check_compare.py DIR --tremor PATH --tremor-run PATH --launcher "cmd" --app BSP_DEMO

Runs (2 processes unless said, about 1-1.5 s each):
  base     -u 2000
  larger   -u 3000: 1.5x the compute per iteration, no interference
  noisy    -u 2000 with delays injected into rank 1's collectives (about 20 % of
           the run) and OMP_NUM_THREADS=3 (a recorded environment variable)
  single   -u 2000 on 1 process: its predictions for 2 processes meet `base`
"""
import argparse
import json
import os
import shutil
import sys

from ux_common import check, failures, finish, mpi_run, run, single_run_file

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--tremor", required=True)
parser.add_argument("--tremor-run", required=True)
parser.add_argument("--launcher", required=True)
parser.add_argument("--app", required=True)
options = parser.parse_args()

USAGE, BAD_INPUT = 1, 2  # estimators/cli/exit_codes.hpp
# Identical clean runs on the shared 2-core test machine differ in intrinsic
# run time by up to 6 %; the planted interference adds about 20 %.
TOLERANCE_PERCENT = "8"
# A load burst from other jobs on the 2 cores during one of the runs can slow
# it by tens of percent (seen once in 20 sets). The runs are then measured
# again: a broken comparison fails every attempt.
ATTEMPTS = 3


def make_run(folder, name, processes, compute_us, inject=None, env=None):
    directory = os.path.join(folder, name)
    os.makedirs(directory)
    command = [options.tremor_run, "--output-dir", directory, "--report", "none"]
    if inject:
        command += ["--inject", inject]
    command += [options.app, "-n", "300", "-u", str(compute_us), "-k", "0", "-q"]
    changes = {"LD_PRELOAD": None, "TREMOR_LIBDIR": None, "OMP_NUM_THREADS": None}
    changes.update(env or {})
    result = mpi_run(options.launcher, processes, command, changes)
    check(result.returncode == 0, f"{name}: run exit 0: {result.stderr[-2000:]}")
    found = single_run_file(directory)
    if not found:
        return None
    path = os.path.join(folder, name + ".h5")  # the stem names the run in the tables
    os.rename(found, path)
    return path


def compare(*arguments):
    return run([options.tremor, "compare", *arguments])


def compare_json(*arguments):
    result = compare(*arguments, "--json")
    check(result.returncode == 0, f"compare {arguments} exit 0: {result.stderr[-2000:]}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        check(False, f"compare {arguments} prints JSON: {result.stdout[:500]}")
        return None


def measure_and_compare(folder):
    """One set of runs and every check on their comparison; returns the base run."""
    os.makedirs(folder)
    base = make_run(folder, "base", 2, 2000)
    larger = make_run(folder, "larger", 2, 3000)
    noisy = make_run(folder, "noisy", 2, 2000, inject="mean=30000,sd=3000,p=0.03,calls=coll,ranks=1,seed=7",
                     env={"OMP_NUM_THREADS": "3"})
    single = make_run(folder, "single", 1, 2000)

    if base and larger:
        # 1.5x the compute, same communication: about 50 % slower, all of it intrinsic.
        report = compare_json(base, larger)
        if report:
            verdict = report["verdicts"][0]
            print("larger:", verdict["text"])
            check([r["name"] for r in report["runs"]] == ["base", "larger"], "runs named by file stem, reference first")
            check(verdict["intrinsic_differs"], "larger: the intrinsic run times differ")
            check(30.0 < verdict["intrinsic_change_percent"] < 70.0,
                  f"larger: intrinsically 30-70 % slower, got {verdict['intrinsic_change_percent']:.1f}")
            check(verdict["text"].startswith("larger is ") and "slower than base intrinsically" in verdict["text"],
                  f"larger: the verdict says slower intrinsically: {verdict['text']}")
            check(verdict["interference_share"] < 0.5, "larger: interference explains less than half")
            groups = report["groups"]
            check(len(groups) >= 1, "larger: the groups are compared")
            for group in groups:
                change = group["change_percent"][1]
                check(change is not None and 25.0 < change < 75.0,
                      f"larger: group {group['label']} matched and 25-75 % slower, got {change}")

    if base and noisy:
        page = os.path.join(folder, "noisy.html")
        report = compare_json(base, noisy, "--tolerance", TOLERANCE_PERCENT, "--html", page)
        if report:
            verdict = report["verdicts"][0]
            print("noisy:", verdict["text"], f"(intrinsic {verdict['intrinsic_change_percent']:+.1f} %)")
            check(not verdict["intrinsic_differs"], f"noisy: intrinsic times agree: {verdict['text']}")
            check(verdict["text"].startswith("the difference is interference: noisy's run time is"),
                  f"noisy: the verdict names interference: {verdict['text']}")
            check(verdict["total_change_percent"] > 10.0, "noisy: the planted delays lengthen the run by > 10 %")
            check(verdict["interference_share"] > 0.6, "noisy: lost time explains most of the difference")
            check(report["runs"][1]["lost_percent"] > 10.0, "noisy: more than 10 % lost")
            variables = [d for d in report["environment_differences"] if d["field"] == "variable OMP_NUM_THREADS"]
            check(len(variables) == 1 and variables[0]["values"] == ["(absent)", "3"],
                  f"noisy: OMP_NUM_THREADS listed as an environment difference: {report['environment_differences']}")
            check(os.path.isfile(page), "--html writes the page")
            if os.path.isfile(page):
                with open(page, encoding="utf-8") as handle:
                    html = handle.read()
                check('<td class="differs">3</td>' in html, "the page highlights the differing variable")
                check(verdict["text"] in html, "the page shows the verdict")
        text = compare(base, noisy, "--tolerance", TOLERANCE_PERCENT)
        check(text.returncode == 0, "text output exit 0")
        check(any(line.split()[:1] == ["variable"] and "*3" in line for line in text.stdout.splitlines()),
              f"text marks the differing variable with *: {text.stdout}")
        check("Verdict: the difference is interference" in text.stdout, "text ends with the verdict")

    if single and base:
        report = compare_json(single, base)
        if report:
            predictions = report["predictions"]
            check(len(predictions) >= 1, f"single: predictions for 2 processes are checked: {report['predictions_note']}")
            for prediction in predictions:
                check(prediction["from"] == "single" and prediction["to"] == "base" and prediction["processes"] == 2,
                      f"single: prediction from single to base at 2 processes: {prediction}")
                inside = prediction["pi_low_s"] <= prediction["actual_s"] <= prediction["pi_high_s"]
                check(prediction["inside"] == inside, f"single: 'inside' matches the prediction interval: {prediction}")
                inside_ci = prediction["ci_low_s"] <= prediction["actual_s"] <= prediction["ci_high_s"]
                check(prediction["inside_ci"] == inside_ci, f"single: 'inside_ci' matches the CI: {prediction}")
            check(report["runs"][1]["processes"] == 2 and report["runs"][0]["processes"] == 1, "process counts")
    return base


shutil.rmtree(options.directory, ignore_errors=True)
os.makedirs(options.directory)
for attempt in range(1, ATTEMPTS + 1):
    failures.clear()
    base = measure_and_compare(os.path.join(options.directory, f"attempt{attempt}"))
    if not failures:
        break
    print(f"attempt {attempt}: {len(failures)} check(s) failed", file=sys.stderr)

# Bad input: a clear message and exit 2 (fewer than two files: a usage error,
# exit 1), nothing on stdout.
not_a_run = os.path.join(options.directory, "not_a_run.h5")
with open(not_a_run, "w", encoding="utf-8") as handle:
    handle.write("this is not HDF5\n")
missing = os.path.join(options.directory, "missing.h5")
for arguments, message, status in [
    ([base or not_a_run, missing], "missing.h5: not a readable Tremor run file", BAD_INPUT),
    ([base or not_a_run, not_a_run], "not_a_run.h5: not a readable Tremor run file", BAD_INPUT),
    ([base or not_a_run], "give at least two run files", USAGE),
    ([], "give at least two run files", USAGE),
]:
    result = compare(*arguments)
    check(result.returncode == status, f"compare {arguments}: exit {status}, got {result.returncode}")
    check(message in result.stderr, f"compare {arguments}: says '{message}': {result.stderr}")
    check(result.stdout == "", f"compare {arguments}: nothing on stdout")

finish("check_compare")
