"""`tremor compare` on planted runs of bsp_demo, and its errors on bad input.

usage: check_compare.py DIR --tremor PATH --tremor-run PATH --launcher "cmd" --app BSP_DEMO [--calibrate N]

Runs (2 processes unless said, about 1-1.5 s each; every run does the same
compute units per microsecond, -c, calibrated once):
  base     -u 2000
  larger   -u 3000: 1.5x the compute per iteration, no interference
  noisy    -u 2000 with delays injected into rank 1's collectives (about 20 % of
           the run; the truth is the injector's log) and OMP_NUM_THREADS=3 (a
           recorded environment variable)
  single   -u 2000 on 1 process: its predictions for 2 processes meet `base`

Tolerances are k·σ of a quiet calibration (--calibrate N prints the figures;
the constants below say which). Checks of timings may fail on a busy machine:
they are run once more only when the machine was measured busy during the
failed set (test/common/tremor_testing.py), and skip (exit 77) when the
retry fails on a busy machine too.
"""
import argparse
import json
import os
import shutil
import sys


from ux_common import check, failures, finish, mpi_run, mpi_run_measured, run, single_run_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "validation", "campaigns"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import injected_truth  # noqa: E402
from tremor_testing import print_calibration, skip  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--tremor", required=True)
parser.add_argument("--tremor-run", required=True)
parser.add_argument("--launcher", required=True)
parser.add_argument("--app", required=True)
parser.add_argument("--calibrate", type=int, default=0, metavar="N")
options = parser.parse_args()

USAGE, BAD_INPUT = 1, 2  # estimators/cli/exit_codes.hpp
# The noise between identical runs, from a quiet calibration: the clean runs
# of the kinds campaigns of the same demo on the idle 2-core Debian 12 VM
# (docs/validation/kinds{,-check,-nine}/demo, 2026-11-25/26, 15 runs in 3
# campaigns): their intrinsic run time deviates from its campaign's mean with
# σ 1.13 %, their run time with σ 1.16 %. A difference of two runs has √2
# times that; the tolerances are 4σ of it (--calibrate N prints the figures).
INTRINSIC_SIGMA_PERCENT = 1.13
RUN_TIME_SIGMA_PERCENT = 1.16
TOLERANCE_PERCENT = f"{4 * 2 ** 0.5 * INTRINSIC_SIGMA_PERCENT:.1f}"
# larger does 1.5x the compute units (-c, the same per microsecond in every
# run): its intrinsic run time is 50 % longer, less the part of an iteration
# outside the compute, which does not grow (the 4 KiB ring exchange and the
# Allreduce, under 100 µs of 2000-4000 µs: at most 2 pp), within the noise of
# a ratio of two runs (1.5 × the tolerance).
LARGER_CHANGE = (49.0, 1.0 + 1.5 * float(TOLERANCE_PERCENT))
LARGER_GROUP_CHANGE = LARGER_CHANGE
# noisy: the lost time less the injected critical path, as the kinds
# campaigns' sparse bursts in the same calibration (+0.73 pp, pooled σ 0.23 pp);
# its run-time change against base less the change the truth alone makes,
# within the noise of two run times.
NOISY_LOST_PP = (0.73, 4 * 0.23)
NOISY_TOTAL_PP = (0.0, 4 * 2 ** 0.5 * RUN_TIME_SIGMA_PERCENT)
# Checks of timings, and the machine's measured share of each run of the set.
timing_failures = []
loads = []
figures = {}


def timing_check(condition, what):
    """A check the machine's own load can fail: excused only on a machine measured busy."""
    if not condition:
        timing_failures.append(what)
        print(f"FAIL (timing): {what}", file=sys.stderr)


def within(value, centre_tolerance, machine_share=0.0):
    centre, tolerance = centre_tolerance
    return abs(value - centre) <= tolerance + machine_share


def compute_units():
    result = mpi_run(options.launcher, 1, [options.app, "-P"], {"LD_PRELOAD": None})
    check(result.returncode == 0, f"{options.app} -P: {result.stderr[-500:]}")
    return result.stdout.split()[-1] if result.returncode == 0 else "1000"


UNITS = compute_units()


def make_run(folder, name, processes, compute_us, inject=None, env=None):
    directory = os.path.join(folder, name)
    os.makedirs(directory)
    command = [options.tremor_run, "--output-dir", directory, "--report", "none"]
    if inject:
        command += ["--inject", inject]
    command += [options.app, "-n", "300", "-u", str(compute_us), "-c", UNITS, "-k", "0", "-q"]
    changes = {"LD_PRELOAD": None, "TREMOR_LIBDIR": None, "OMP_NUM_THREADS": None}
    changes.update(env or {})
    result, load = mpi_run_measured(options.launcher, processes, command, os.path.basename(options.app), changes)
    loads.append((name, load))
    check(result.returncode == 0, f"{name}: run exit 0: {result.stderr[-2000:]}")
    found = single_run_file(directory)
    if not found:
        return None
    if inject:
        import h5py
        with h5py.File(found, "r") as h5:
            figures[name + "_truth_percent"] = injected_truth.injected_percent(h5)
    path = os.path.join(folder, name + ".h5")  # the stem names the run in the tables
    os.rename(found, path)
    return path


def machine_share(capped=False):
    """The largest share of a run of this set the machine took (JobLoad), %; capped:
    at most the tolerance (beyond it the set is busy: a miss is excused, never passed)."""
    share = max((load.percent() for _, load in loads), default=0.0)
    return min(share, float(TOLERANCE_PERCENT)) if capped else share


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
    again = make_run(folder, "again", 2, 2000)
    larger = make_run(folder, "larger", 2, 3000)
    noisy = make_run(folder, "noisy", 2, 2000, inject="mean=30000,sd=3000,p=0.03,calls=coll,ranks=1,seed=7",
                     env={"OMP_NUM_THREADS": "3", **injected_truth.TRACE_SETTINGS})
    single = make_run(folder, "single", 1, 2000)
    added = machine_share(capped=True)

    if base and again:
        # The same program twice: the noise the compare tolerance is derived from.
        report = compare_json(base, again, "--tolerance", TOLERANCE_PERCENT)
        if report:
            verdict = report["verdicts"][0]
            figures["identical_change_percent"] = verdict["intrinsic_change_percent"]
            print("again:", verdict["text"])
            timing_check(not verdict["intrinsic_differs"], f"again: identical runs agree: {verdict['text']}")

    if base and larger:
        # 1.5x the compute, same communication: about 50 % slower, all of it intrinsic.
        report = compare_json(base, larger)
        if report:
            verdict = report["verdicts"][0]
            print("larger:", verdict["text"])
            change = verdict["intrinsic_change_percent"]
            figures["larger_change_percent"] = change
            check([r["name"] for r in report["runs"]] == ["base", "larger"], "runs named by file stem, reference first")
            timing_check(verdict["intrinsic_differs"], "larger: the intrinsic run times differ")
            timing_check(within(change, LARGER_CHANGE, added),
                         f"larger: intrinsically {LARGER_CHANGE[0]:.1f} +- {LARGER_CHANGE[1]:.1f} % (+ {added:.1f} % "
                         f"the machine took) slower, got {change:.1f}")
            timing_check(verdict["text"].startswith("larger is ") and "slower than base intrinsically" in verdict["text"],
                         f"larger: the verdict says slower intrinsically: {verdict['text']}")
            timing_check(verdict["interference_share"] < 0.5, "larger: interference explains less than half")
            groups = report["groups"]
            check(len(groups) >= 1, "larger: the groups are compared")
            for group in groups:
                group_change = group["change_percent"][1]
                check(group_change is not None, f"larger: group {group['label']} matched")
                if group_change is not None:
                    figures.setdefault("larger_group_change_percent", []).append(group_change)
                    timing_check(within(group_change, LARGER_GROUP_CHANGE, added),
                                 f"larger: group {group['label']} {LARGER_GROUP_CHANGE[0]:.1f} +- "
                                 f"{LARGER_GROUP_CHANGE[1]:.1f} % slower, got {group_change:.1f}")

    if base and noisy:
        page = os.path.join(folder, "noisy.html")
        truth = figures.get("noisy_truth_percent", 0.0)
        report = compare_json(base, noisy, "--tolerance", TOLERANCE_PERCENT, "--html", page)
        if report:
            verdict = report["verdicts"][0]
            lost = report["runs"][1]["lost_percent"]
            figures["noisy_lost_error_pp"] = lost - truth
            print("noisy:", verdict["text"], f"(intrinsic {verdict['intrinsic_change_percent']:+.1f} %, injected "
                  f"{truth:.2f} %, lost {lost:.2f} %)")
            timing_check(not verdict["intrinsic_differs"], f"noisy: intrinsic times agree: {verdict['text']}")
            timing_check(verdict["text"].startswith("the difference is interference: noisy's run time is"),
                         f"noisy: the verdict names interference: {verdict['text']}")
            timing_check(within(lost - truth, NOISY_LOST_PP, added),
                         f"noisy: {lost:.2f} % lost for {truth:.2f} % injected")
            # The truth is a share of the noisy run; against base it is truth / (1 - truth).
            expected_total = 100.0 * (truth / 100.0) / (1.0 - truth / 100.0)
            figures["noisy_total_error_pp"] = verdict["total_change_percent"] - expected_total
            timing_check(within(verdict["total_change_percent"] - expected_total, NOISY_TOTAL_PP, added),
                         f"noisy: the run is {verdict['total_change_percent']:.2f} % longer than base for "
                         f"{truth:.2f} % injected (expected {expected_total:.2f} %)")
            # Known wrong: comparing total run times reads the interference as an
            # intrinsic change; it must lie outside compare's tolerance.
            timing_check(abs(verdict["total_change_percent"]) > float(TOLERANCE_PERCENT),
                         "noisy: the total change is within the intrinsic tolerance")
            timing_check(verdict["interference_share"] > 0.6, "noisy: lost time explains most of the difference")
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
        timing_check("Verdict: the difference is interference" in text.stdout, "text ends with the verdict")

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


def check_bad_input(base):
    """Bad input: a clear message and exit 2 (fewer than two files: a usage
    error, exit 1), nothing on stdout."""
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


def calibrate():
    """--calibrate N: the figures the tolerances come from, per set and over the quiet sets."""
    rows = []
    for number in range(options.calibrate):
        figures.clear()
        loads.clear()
        measure_and_compare(os.path.join(options.directory, f"calibration{number}"))
        row = dict(figures, machine_percent=machine_share())
        print(f"set {number}: {row}", flush=True)
        rows.append(row)
    print_calibration(rows, "sets")


shutil.rmtree(options.directory, ignore_errors=True)
os.makedirs(options.directory)
if options.calibrate:
    calibrate()
    sys.exit(0)
for attempt in (1, 2):
    timing_failures.clear()
    loads.clear()
    base = measure_and_compare(os.path.join(options.directory, f"attempt{attempt}"))
    if attempt == 1:
        check_bad_input(base)
    if failures or not timing_failures:
        break
    share = machine_share()
    # Busy: the machine took more of a run than the tightest tolerance (the intrinsic noise's).
    busy = share > float(TOLERANCE_PERCENT)
    print(f"attempt {attempt}: {len(timing_failures)} timing check(s) failed; the machine took up to {share:.2f} % "
          f"of a run ({'busy' if busy else 'not busy'}, busy above {TOLERANCE_PERCENT} %)", file=sys.stderr)
    if not busy:
        failures.extend(timing_failures)
        break
    if attempt == 2:
        skip(f"check_compare: both sets ran on a machine measured busy (up to {share:.2f} % of a run taken); "
             f"timing checks not compared: {timing_failures}")
    print("running the set once more (the one retry)", file=sys.stderr)

finish("check_compare")
