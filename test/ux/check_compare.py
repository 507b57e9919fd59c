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

Tolerances are K·σ of a quiet campaign committed in the repository,
recomputed at each run (test/common/calibration.py; --calibrate N prints the
figures of new runs), widened by all the machine was measured to take from
the set's runs (the kernel's count, JobLoad): Tremor rightly reports that as
interference. The set runs once; a miss outside the widened band fails, and
a known-wrong comparison must land outside the quiet tolerance.
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
from calibration import K_SIGMA, clean_run_noise, injected_kinds  # noqa: E402
from tremor_testing import MachineLoadError, print_calibration  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--tremor", required=True)
parser.add_argument("--tremor-run", required=True)
parser.add_argument("--launcher", required=True)
parser.add_argument("--app", required=True)
parser.add_argument("--calibrate", type=int, default=0, metavar="N")
options = parser.parse_args()

USAGE, BAD_INPUT = 1, 2  # estimators/cli/exit_codes.hpp
# The noise between identical runs: the clean kinds of the quiet kinds campaign
# of the same demo (validation/kinds/demo/runs.csv): each run's intrinsic run
# time and run time about the mean of its kind's runs, pooled σ. A difference
# of two runs has √2 times that; the tolerances are K·σ of it.
INTRINSIC_SIGMA_PERCENT, RUN_TIME_SIGMA_PERCENT, _ = clean_run_noise()
QUIET_TOLERANCE = K_SIGMA * 2 ** 0.5 * INTRINSIC_SIGMA_PERCENT
TOLERANCE_TEXT = f"{QUIET_TOLERANCE:.2f}"  # compare's own; the checks add the machine's share
# larger does 1.5x the compute units (-c, the same per microsecond in every
# run): its intrinsic run time is 50 % longer, less the part of an iteration
# outside the compute, which does not grow (the 4 KiB ring exchange and the
# Allreduce, under 100 µs of 2000-4000 µs: at most 2 pp), within the noise of
# a ratio of two runs (1.5 × the tolerance).
LARGER_CHANGE = (49.0, 1.0 + 1.5 * QUIET_TOLERANCE)
LARGER_GROUP_CHANGE = LARGER_CHANGE
# noisy: the lost time less the injected critical path, as the sparse bursts
# of the same campaign (their mean, K times the injected kinds' pooled σ);
# its run-time change against base less the change the truth alone makes,
# within the noise of two run times.
KIND_MEANS, KIND_SIGMA, _ = injected_kinds()
NOISY_LOST_PP = (KIND_MEANS["sparse"], K_SIGMA * KIND_SIGMA)
NOISY_TOTAL_PP = (0.0, K_SIGMA * 2 ** 0.5 * RUN_TIME_SIGMA_PERCENT)
# single and base: the same iterations on each process; base's ring exchange
# and Allreduce add under 100 us of 2000-4000 us (at most 2 pp), within the
# noise of two run times.
SINGLE_TO_BASE_PP = (1.0, 1.0 + K_SIGMA * 2 ** 0.5 * RUN_TIME_SIGMA_PERCENT)
# The machine's measured share of each run of the set.
loads = []
figures = {}


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


def machine_share(*names):
    """What the machine took from the named runs of the set (JobLoad; all without
    names), %: the sum of each run's share, since a comparison is of two runs.
    Raises MachineLoadError where a run's count is incomplete."""
    chosen = [load for name, load in loads if not names or name in names]
    if not chosen:
        raise MachineLoadError(f"no run of {names or 'the set'} was measured")
    return sum(load.percent() for load in chosen)


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
    try:
        shares = {name: machine_share(name) for name, _ in loads}
        seconds = {name: load.seconds() for name, load in loads}
    except MachineLoadError as error:
        check(False, f"the machine's share of the runs: {error}")
        return base
    print("the machine took, % of each run: " + ", ".join(f"{n} {v:.2f}" for n, v in shares.items()))

    def change_band(report, key, first, second):
        """The change (%) of the compared run's time over the reference's that the runs
        allow, each run's time (key: run_time_s or intrinsic_run_time_s) off by at most
        what the machine took from it (kernel count): (low, high)."""
        reference, compared = report["runs"][0][key], report["runs"][1][key]
        off_reference, off_compared = seconds.get(first, 0.0), seconds.get(second, 0.0)
        low = max(0.0, compared - off_compared) / (reference + off_reference)
        high = (compared + off_compared) / (reference - off_reference) if reference > off_reference else float("inf")
        return 100.0 * (low - 1.0), 100.0 * (high - 1.0)

    def change_check(report, key, first, second, expected, tolerance, what):
        low, high = change_band(report, key, first, second)
        check(low - tolerance <= expected <= high + tolerance,
              f"{what}: {expected:.1f} % expected, the runs allow {low:.1f}..{high:.1f} % +- {tolerance:.1f} "
              f"(the machine took {seconds.get(first, 0.0):.3f} s and {seconds.get(second, 0.0):.3f} s)")

    def machine_part(report, first, second):
        """What the machine took from both runs, as a share of their run-time difference."""
        difference = abs(report["runs"][1]["run_time_s"] - report["runs"][0]["run_time_s"])
        return (seconds.get(first, 0.0) + seconds.get(second, 0.0)) / difference if difference > 0 else float("inf")

    def consistent(verdict):
        """compare's verdict follows its own figures (its rule: a change beyond the larger of
        the tolerance and the uncertainty differs), and its text says so: the margin widens
        with the uncertainty the machine's load adds to the estimates."""
        margin = max(verdict["tolerance_percent"], verdict["uncertainty_percent"])
        check(verdict["intrinsic_differs"] == (abs(verdict["intrinsic_change_percent"]) > margin),
              f"{verdict['compared']}: intrinsic_differs follows the change and the margin: {verdict}")
        if verdict["intrinsic_differs"]:
            start = f"{verdict['compared']} is "
        elif abs(verdict["total_change_percent"]) > margin:
            start = f"the difference is interference: {verdict['compared']}'s run time is"
        else:
            start = f"{verdict['compared']} and {verdict['reference']} agree"
        check(verdict["text"].startswith(start), f"{verdict['compared']}: the verdict starts {start!r}: {verdict}")

    if base and again:
        # The same program twice: the noise the compare tolerance is derived from.
        report = compare_json(base, again, "--tolerance", TOLERANCE_TEXT)
        if report:
            verdict = report["verdicts"][0]
            figures["identical_change_percent"] = verdict["intrinsic_change_percent"]
            print("again:", verdict["text"])
            consistent(verdict)
            change_check(report, "intrinsic_run_time_s", "base", "again", 0.0, QUIET_TOLERANCE,
                         f"again: identical runs agree intrinsically ({verdict['text']})")

    if base and larger:
        # 1.5x the compute, same communication: about 50 % slower, all of it intrinsic.
        report = compare_json(base, larger)
        if report:
            verdict = report["verdicts"][0]
            print("larger:", verdict["text"])
            change = verdict["intrinsic_change_percent"]
            figures["larger_change_percent"] = change
            check([r["name"] for r in report["runs"]] == ["base", "larger"], "runs named by file stem, reference first")
            consistent(verdict)
            change_check(report, "intrinsic_run_time_s", "base", "larger", LARGER_CHANGE[0], LARGER_CHANGE[1],
                         f"larger: intrinsically slower, got {change:.1f} %")
            if verdict["intrinsic_differs"]:
                check("slower than base intrinsically" in verdict["text"],
                      f"larger: the verdict says slower intrinsically: {verdict['text']}")
            allowed = 0.5 + machine_part(report, "base", "larger")
            check(verdict["interference_share"] < allowed,
                  f"larger: interference explains less than {allowed:.2f} of the difference (half, and what the "
                  f"machine took): {verdict['interference_share']:.2f}")
            groups = report["groups"]
            check(len(groups) >= 1, "larger: the groups are compared")
            for group in groups:
                group_change = group["change_percent"][1]
                check(group_change is not None, f"larger: group {group['label']} matched")
                if group_change is not None:
                    figures.setdefault("larger_group_change_percent", []).append(group_change)
                    # A group's time is off by at most as much, relatively, as the run's.
                    low, high = change_band(report, "intrinsic_run_time_s", "base", "larger")
                    ratio = (1.0 + group_change / 100.0) / (1.0 + change / 100.0)
                    group_low, group_high = ratio * (100.0 + low) - 100.0, ratio * (100.0 + high) - 100.0
                    expected, tolerance = LARGER_GROUP_CHANGE
                    check(group_low - tolerance <= expected <= group_high + tolerance,
                          f"larger: group {group['label']} {expected:.1f} +- {tolerance:.1f} % slower, got "
                          f"{group_change:.1f} (the runs allow {group_low:.1f}..{group_high:.1f})")

    if base and noisy:
        page = os.path.join(folder, "noisy.html")
        truth = figures.get("noisy_truth_percent", 0.0)
        report = compare_json(base, noisy, "--tolerance", TOLERANCE_TEXT, "--html", page)
        if report:
            verdict = report["verdicts"][0]
            lost = report["runs"][1]["lost_percent"]
            figures["noisy_lost_error_pp"] = lost - truth
            print("noisy:", verdict["text"], f"(intrinsic {verdict['intrinsic_change_percent']:+.1f} %, injected "
                  f"{truth:.2f} %, lost {lost:.2f} %)")
            consistent(verdict)
            change_check(report, "intrinsic_run_time_s", "base", "noisy", 0.0, QUIET_TOLERANCE,
                         f"noisy: intrinsic times agree ({verdict['text']})")
            check(within(lost - truth, NOISY_LOST_PP, shares.get("noisy", 0.0)),
                  f"noisy: {lost:.2f} % lost for {truth:.2f} % injected")
            # The truth is a share of the noisy run; against base it is truth / (1 - truth).
            expected_total = 100.0 * (truth / 100.0) / (1.0 - truth / 100.0)
            figures["noisy_total_error_pp"] = verdict["total_change_percent"] - expected_total
            change_check(report, "run_time_s", "base", "noisy", expected_total, NOISY_TOTAL_PP[1],
                         f"noisy: the run is {verdict['total_change_percent']:.2f} % longer than base for "
                         f"{truth:.2f} % injected")
            # Known wrong: comparing total run times reads the interference as an
            # intrinsic change; what was planted must lie outside compare's quiet tolerance.
            check(expected_total > QUIET_TOLERANCE,
                  f"noisy: the planted change ({expected_total:.2f} %) is within the quiet intrinsic tolerance")
            least = 0.6 - machine_part(report, "base", "noisy")
            check(verdict["interference_share"] > least,
                  f"noisy: lost time explains more than {least:.2f} of the difference (0.6, less what the machine "
                  f"took): {verdict['interference_share']:.2f}")
            variables = [d for d in report["environment_differences"] if d["field"] == "variable OMP_NUM_THREADS"]
            check(len(variables) == 1 and variables[0]["values"] == ["(absent)", "3"],
                  f"noisy: OMP_NUM_THREADS listed as an environment difference: {report['environment_differences']}")
            check(os.path.isfile(page), "--html writes the page")
            if os.path.isfile(page):
                with open(page, encoding="utf-8") as handle:
                    html = handle.read()
                check('<td class="text differs">3</td>' in html, "the page highlights the differing variable")
                check(verdict["text"] in html, "the page shows the verdict")
        text = compare(base, noisy, "--tolerance", TOLERANCE_TEXT)
        check(text.returncode == 0, "text output exit 0")
        check(any(line.split()[:1] == ["variable"] and "*3" in line for line in text.stdout.splitlines()),
              f"text marks the differing variable with *: {text.stdout}")
        if report:
            # The text wraps at 100 columns: compare word by word.
            check(f"Verdict: {report['verdicts'][0]['text']}" in " ".join(text.stdout.split()),
                  "text ends with the JSON's verdict")

    if single and base:
        # What the input plants: base runs single's iterations on each of its
        # processes, one per core, so its run time is single's plus the
        # exchange and Allreduce between them (SINGLE_TO_BASE_PP). Every
        # prediction's median lies there too, and its interval holds base
        # (each widened by what the machine took from the runs).
        report = compare_json(single, base)
        if report:
            predictions = report["predictions"]
            single_s, base_s = report["runs"][0]["run_time_s"], report["runs"][1]["run_time_s"]
            figures["single_to_base_pp"] = 100.0 * (base_s / single_s - 1.0)
            change_check(report, "run_time_s", "single", "base", *SINGLE_TO_BASE_PP, "single: base's run time")
            slack = seconds.get("single", 0.0) + seconds.get("base", 0.0)
            check(len(predictions) >= 1, f"single: predictions for 2 processes are checked: {report['predictions_note']}")
            for prediction in predictions:
                method = prediction["method"]
                check(prediction["from"] == "single" and prediction["to"] == "base" and prediction["processes"] == 2,
                      f"single: prediction from single to base at 2 processes: {prediction}")
                check(prediction["actual_s"] == base_s, f"single: {method}'s actual run time is base's: {prediction}")
                median_pp = 100.0 * (prediction["median_s"] / single_s - 1.0)
                figures.setdefault("single_median_pp", []).append(median_pp)
                check(within(median_pp, SINGLE_TO_BASE_PP, 100.0 * slack / single_s),
                      f"single: {method} predicts {prediction['median_s']:.3f} s, {median_pp:+.2f} % over single's "
                      f"{single_s:.3f} s; expected {SINGLE_TO_BASE_PP[0]} +- {SINGLE_TO_BASE_PP[1]:.1f} % (the "
                      f"machine took {slack:.3f} s)")
                low, high = prediction["pi_low_s"], prediction["pi_high_s"]
                check(low - slack <= base_s <= high + slack,
                      f"single: base's {base_s:.3f} s outside {method}'s prediction interval {low:.3f}-{high:.3f} s "
                      f"widened by the {slack:.3f} s the machine took")
                if low <= base_s <= high:
                    check(prediction["inside"], f"single: {method}'s 'inside' is false for a run inside: {prediction}")
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
        try:
            share = machine_share()
        except MachineLoadError:
            share = float("inf")  # unmeasured: left out of the quiet sets
        row = dict(figures, machine_percent=share)
        print(f"set {number}: {row}", flush=True)
        rows.append(row)
    print_calibration(rows, "sets")


shutil.rmtree(options.directory, ignore_errors=True)
os.makedirs(options.directory)
if options.calibrate:
    calibrate()
    sys.exit(0)
base = measure_and_compare(os.path.join(options.directory, "set"))
check_bad_input(base)
finish("check_compare")
