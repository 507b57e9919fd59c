#!/usr/bin/python3
"""Runs a short validation campaign and checks what it produced.

usage: check_campaign.py interference|scale|kinds OUTPUT_DIR -- CAMPAIGN_SCRIPT ARGS...
The campaign is run once with --output OUTPUT_DIR (emptied first); exit 0
when every check passes, 1 with one "CHECK FAILED" line otherwise. Nothing is
retried or skipped: the estimates' accuracy is checked on recorded runs (the
replays); these live campaigns check what holds on a busy machine.

Every run's machine_percent (the kernel's count of what the machine took
from its ranks, validation/campaigns/machine_load.py) must be a number: a
campaign that could not measure it fails.
interference: runs.csv has one row per run; runs without injection logged no
delay and read below the low class's limit plus what the machine took from
them; every run at the heaviest level is estimated high and its injected
critical path is above 15 %; the fastest run measures 0 and 0 <= measured <=
raw for every run; accuracy follows its definition; summary.csv/.md and both
PNG plots exist.
kinds (plumbing): runs.csv has --runs rows per kind; every run kept (--keep)
its run file, its report, its injector logs and its machine_load.txt; kinds
without injection logged no delay and have a truth of 0, injected kinds
logged delays on the injected rank and have a truth above 0; every report
splits the lost time into compute, mpi and io, as runs.csv does;
summary.md exists.
scale: predictions exist at every requested size, are finite with
ci_low <= median <= ci_high and pi_low < median < pi_high, every base run has
a headline method, and each method's median does not decrease with the scale
factor; every target size has actual runs compared with them, and the
headline median lies within SCALE_ERROR of each actual run there, widened by
what the machine took from both runs, and twice the base run's time (a
known-wrong prediction) lies outside SCALE_ERROR; coverage.csv/.md and the plot exist. With
--reanalyse SOURCE (re-scoring a finished campaign), runs.csv must be
SOURCE's and predictions.csv must equal SOURCE's: the offline re-analysis of
the base files reproduces the in-run one.
"""
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
import calibration  # noqa: E402
import campaign_common  # noqa: E402
import injected_truth  # noqa: E402
from machine_load import MachineLoadError  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LOW_LIMIT_PERCENT = 7.5  # docs/statistics.md#classification


def fail(message):
    print("CHECK FAILED: " + message)
    sys.exit(1)


def machine_percent(row):
    """What the machine took from the run (runs.csv, the campaign's kernel count), %."""
    try:
        value = float(row.get("machine_percent"))
    except (TypeError, ValueError):
        value = float("nan")
    if not (math.isfinite(value) and value >= 0):
        fail(f"run {row.get('run')} ({row.get('kind', row.get('level_percent'))}): machine_percent "
             f"{row.get('machine_percent')!r} is not a measured share")
    return value


def read_csv(path):
    if not os.path.exists(path):
        fail(f"{path} was not written")
    with open(path) as handle:
        return list(csv.DictReader(handle))


def require_png(path):
    if not os.path.exists(path):
        fail(f"plot {path} was not written")
    with open(path, "rb") as handle:
        if handle.read(8) != PNG_SIGNATURE or os.path.getsize(path) < 2000:
            fail(f"{path} is not a plausible PNG")


def option(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def finite(row, column, what):
    try:
        value = float(row[column])
    except (KeyError, TypeError, ValueError):
        value = float("nan")
    if not math.isfinite(value):
        fail(f"{what}: {column} is not a number: {row.get(column)!r}")
    return value


def check_uninjected_run(r):
    """Without injection the estimate holds only what the machine took (Tremor
    rightly reports it), measured by the kernel: within the low class beyond it."""
    if float(r["injected_delays"]) != 0:
        fail(f"run {r['run']} had no injection but logged {r['injected_delays']} delays")
    estimated, added = float(r["estimated_percent"]), machine_percent(r)
    print(f"run {r['run']} without injection: estimated {estimated:.2f} % ({r['estimate_class']}), "
          f"the machine took {added:.2f} %")
    if estimated >= LOW_LIMIT_PERCENT + added:
        fail(f"run {r['run']} without injection estimated {estimated:.2f} %, above the low class's "
             f"{LOW_LIMIT_PERCENT} % plus the {added:.2f} % the machine took")


def check_interference(out, argv):
    rows = read_csv(os.path.join(out, "runs.csv"))
    expected_runs = int(option(argv, "--runs", "15"))
    if len(rows) != expected_runs:
        fail(f"{len(rows)} runs in runs.csv, expected {expected_runs}")
    for row in rows:
        for column in ("run_time_s", "measured_percent", "estimated_percent", "injected_percent", "accuracy"):
            finite(row, column, f"run {row['run']}")
        machine_percent(row)
    quiet = [r for r in rows if float(r["level_percent"]) == 0]
    heaviest_level = max(float(r["level_percent"]) for r in rows)
    heavy = [r for r in rows if float(r["level_percent"]) == heaviest_level]
    if not quiet or heaviest_level <= 15:
        fail("the levels must include 0 and one above 15 %")
    for r in quiet:
        check_uninjected_run(r)
    # The machine only adds interference: a heavily injected run reads high whatever it did.
    for r in heavy:
        injected = float(r["injected_percent"])
        if not (r["estimate_class"] == "high" and injected > 15):
            fail(f"run {r['run']} at {heaviest_level:g} %: estimated {r['estimate_class']} "
                 f"({float(r['estimated_percent']):.2f} %), injected critical path {injected:.2f} %")
    fastest = min(rows, key=lambda r: float(r["run_time_s"]))
    if float(fastest["measured_percent"]) != 0:
        fail(f"the fastest run must measure 0 %, not {fastest['measured_percent']}")
    for r in rows:
        raw, measured = float(r["raw_measured_percent"]), float(r["measured_percent"])
        if not 0 <= measured <= raw + 1e-9:
            fail(f"run {r['run']}: measured {measured} % outside [0, raw {raw} %]")
        if abs(float(r["accuracy"]) - (1 - abs(float(r["p_measured"]) - float(r["p_estimated"])))) > 1e-6:
            fail(f"run {r['run']}: accuracy is not 1 - |p_measured - p_estimated|")
    summary = read_csv(os.path.join(out, "summary.csv"))
    if len(summary) != 1 or int(summary[0]["runs"]) != expected_runs:
        fail(f"summary.csv should have one workload with {expected_runs} runs: {summary}")
    if not os.path.exists(os.path.join(out, "summary.md")):
        fail("summary.md was not written")
    require_png(os.path.join(out, "estimated_vs_measured.png"))
    require_png(os.path.join(out, "accuracy_boxplot.png"))


# The ranks kinds_campaign.py injects into (its KINDS); None: every rank.
INJECTED_RANKS = {"sparse": {1}, "most_p0.5": {1}, "most_p0.9": {1}, "slow_rank": {1}, "io_only": {1},
                  "window": None}
UNINJECTED_KINDS = ("clean", "checkpoint", "io_clean", "clean_long", "contended", "contended_window")
COMPONENTS = ("compute", "mpi", "io")


def check_kept_run(folder, kind):
    """One kept run of the kinds campaign: its files, its injector logs, its report's components."""
    for pattern in ("*.h5", "*.json", "tremor-inject_*.csv"):
        if not glob.glob(os.path.join(folder, pattern)):
            fail(f"{kind}: no {pattern} in {folder}")
    reports = glob.glob(os.path.join(folder, "*.json"))
    if len(reports) != 1 or len(glob.glob(os.path.join(folder, "*.h5"))) != 1:
        fail(f"{kind}: expected one run file and one report in {folder}")
    with open(reports[0]) as handle:
        lost = ((json.load(handle).get("diagnosis") or {}).get("components") or {}).get("lost") or {}
    if sorted(lost) != sorted(COMPONENTS) or not all(math.isfinite(float(lost[c])) for c in COMPONENTS):
        fail(f"{kind}: the report's lost time is not split into {COMPONENTS}: {lost}")
    logs = injected_truth.read_logs(folder)
    delayed = {rank for rank, rows in logs.items() for row in rows if row["spent_us"] > 0}
    if kind in UNINJECTED_KINDS:
        if delayed:
            fail(f"{kind}: nothing is injected, but ranks {sorted(delayed)} logged delays")
    elif not delayed or (INJECTED_RANKS.get(kind) is not None and delayed != INJECTED_RANKS[kind]):
        fail(f"{kind}: delays logged on ranks {sorted(delayed)}, expected {INJECTED_RANKS.get(kind) or 'any'}")
    return sum(row["spent_us"] for rows in logs.values() for row in rows)


def check_kinds(out, argv):
    rows = read_csv(os.path.join(out, "runs.csv"))
    kinds = option(argv, "--kinds").split(",")
    runs = int(option(argv, "--runs", "3"))
    kept = option(argv, "--keep")
    if not kept:
        fail("run the kinds campaign with --keep DIR: its run files are checked")
    if sorted({r["kind"] for r in rows}) != sorted(kinds):
        fail(f"kinds in runs.csv {sorted({r['kind'] for r in rows})}, expected {sorted(kinds)}")
    for kind in kinds:
        mine = [r for r in rows if r["kind"] == kind]
        if sorted(int(r["run"]) for r in mine) != list(range(runs)):
            fail(f"{kind}: runs {[r['run'] for r in mine]} in runs.csv, expected 0..{runs - 1}")
        for r in mine:
            what = f"{kind} run {r['run']}"
            truth = finite(r, "truth_percent", what)
            for column in ("primary_percent", "mad4_percent", "run_time_s") + tuple(f"lost_{c}_percent"
                                                                                   for c in COMPONENTS):
                finite(r, column, what)
            machine_percent(r)
            spent_us = check_kept_run(os.path.join(kept, f"{r['workload']}-{kind}-{r['run']}"), kind)
            if kind in UNINJECTED_KINDS and truth != 0:
                fail(f"{what}: no injection, but a truth of {truth} %")
            if kind not in UNINJECTED_KINDS and not truth > 0:
                fail(f"{what}: {spent_us / 1e3:.1f} ms of delays logged, but a truth of {truth} %")
            print(f"{what}: truth {truth:.2f} %, estimate {float(r['primary_percent']):.2f} %, the machine took "
                  f"{machine_percent(r):.2f} %; files, logs and components present")
    if not os.path.exists(os.path.join(out, "summary.md")):
        fail("summary.md was not written")


def run_machine_share(run):
    """What the machine took from a scale run, a share of it (machine_load.txt beside its run file)."""
    try:
        return campaign_common.read_machine_load(os.path.dirname(run["h5_file"]), float(run["run_time_s"])) / 100.0
    except MachineLoadError as error:
        fail(f"{run['workload']} at {run['processes']} processes, repetition {run['repetition']}: {error}")


def check_scale_error(runs, comparisons, base):
    """Each headline prediction at twice the base size against each actual run
    there: the median within SCALE_ERROR of it, widened by what the machine took
    from both runs (it slows the actual run, or the base run the prediction
    grew from); twice the base run's time, a known-wrong prediction, lies outside
    the band of a quiet machine. SCALE_ERROR: the headline's relative error at
    twice the base size, |mean| + 4σ over the scale campaigns recorded on this
    2-core VM (calibration.scale_error)."""
    scale_error, recorded_pairs = calibration.scale_error()
    by_key = {(r["workload"], int(r["repetition"]), int(r["processes"])): r for r in runs}
    pairs = [c for c in comparisons if c["method"] == "headline" and int(c["factor"]) == 2]
    if not pairs:
        fail("no headline prediction at twice the base size was compared with an actual run")
    for c in pairs:
        actual = by_key.get((c["workload"], int(c["actual_repetition"]), int(c["processes"])))
        source = by_key.get((c["workload"], int(c["repetition"]), base))
        if actual is None or source is None:
            fail(f"the runs of comparison {c} are not in runs.csv")
        band = scale_error + run_machine_share(actual) + run_machine_share(source)
        error = float(c["relative_error"])
        wrong = 2.0 * float(source["run_time_s"]) / float(actual["run_time_s"]) - 1.0
        print(f"{c['workload']} rep {c['repetition']} -> {c['processes']} processes (rep {c['actual_repetition']}): "
              f"median {float(c['median_s']):.4f} s for {float(c['actual_run_time_s']):.4f} s, error {error:+.2%} "
              f"(band +-{band:.2%}: {scale_error:.2%} from {recorded_pairs} recorded pairs + the machine's)")
        if abs(error) > band:
            fail(f"{c['workload']}: the headline median {float(c['median_s']):.4f} s misses the actual "
                 f"{float(c['actual_run_time_s']):.4f} s by {error:+.2%} (band +-{band:.2%})")
        if abs(wrong) <= scale_error:
            fail(f"{c['workload']}: twice the base run's time ({wrong:+.2%}) is within the quiet band "
                 f"+-{scale_error:.2%}")


def same_rows(path, reference_path, numeric):
    rows, reference = read_csv(path), read_csv(reference_path)
    if len(rows) != len(reference):
        fail(f"{path}: {len(rows)} rows, {reference_path}: {len(reference)}")
    for row, expected in zip(rows, reference):
        for column, value in expected.items():
            if column in numeric and value and row[column]:
                if not math.isclose(float(row[column]), float(value), rel_tol=1e-9):
                    fail(f"{path} {column}: {row[column]} != {value} of {reference_path}")
            elif row[column] != value:
                fail(f"{path} {column}: {row[column]!r} != {value!r} of {reference_path}")


def check_scale(out, argv):
    # The campaign's own record of its sizes: a re-analysis run has no size options.
    with open(os.path.join(out, "campaign.json")) as handle:
        recorded = json.load(handle)["arguments"]
    base = int(recorded["base_np"])
    targets = [int(v) for v in str(recorded["target_np"]).split(",") if v]
    predicted_only = [int(v) for v in str(recorded["predict_only_np"] or "").split(",") if v]
    source = option(argv, "--reanalyse")
    if source:
        same_rows(os.path.join(out, "runs.csv"), os.path.join(source, "runs.csv"), {"wall_s", "run_time_s"})
        same_rows(os.path.join(out, "predictions.csv"), os.path.join(source, "predictions.csv"),
                  {"factor", "processes", "median_s", "ci_low_s", "ci_high_s", "pi_low_s", "pi_high_s"})
    predictions = read_csv(os.path.join(out, "predictions.csv"))
    if not predictions:
        fail("no predictions in predictions.csv")
    sizes = {int(p["processes"]) for p in predictions}
    for size in targets + predicted_only:
        if size not in sizes:
            fail(f"no prediction for {size} processes (have {sorted(sizes)})")
    by_method = {}
    for p in predictions:
        low, median, high = (float(p[c] or "nan") for c in ("ci_low_s", "median_s", "ci_high_s"))
        if not all(math.isfinite(v) for v in (low, median, high)):
            fail(f"non-finite prediction: {p}")
        if not low <= median <= high:
            fail(f"interval does not contain its median: {p}")
        pi_low, pi_high = float(p["pi_low_s"] or "nan"), float(p["pi_high_s"] or "nan")
        if not pi_low < median < pi_high:
            fail(f"prediction interval does not contain the median: {p}")
        if not p["headline_method"]:
            fail(f"base run without a headline method: {p}")
        if int(p["processes"]) != base * int(p["factor"]):
            fail(f"processes != base × factor: {p}")
        by_method.setdefault((p["workload"], p["repetition"], p["method"]), []).append((int(p["factor"]), median))
    for key, points in by_method.items():
        points.sort()
        for (f1, m1), (f2, m2) in zip(points, points[1:]):
            if m2 < m1 * (1 - 1e-12):
                fail(f"{key}: median falls from {m1:.6g} s at factor {f1} to {m2:.6g} s at factor {f2}")
    comparisons = read_csv(os.path.join(out, "comparisons.csv"))
    for size in targets:
        if not any(int(c["processes"]) == size for c in comparisons):
            fail(f"no actual run at {size} processes was compared")
    check_scale_error(read_csv(os.path.join(out, "runs.csv")), comparisons, base)
    if not read_csv(os.path.join(out, "coverage.csv")) or not os.path.exists(os.path.join(out, "coverage.md")):
        fail("coverage table missing")
    for workload in {p["workload"] for p in predictions}:
        require_png(os.path.join(out, f"scale_{workload}.png"))


def main():
    checks = {"interference": check_interference, "scale": check_scale, "kinds": check_kinds}
    if len(sys.argv) < 5 or sys.argv[3] != "--" or sys.argv[1] not in checks:
        sys.exit(__doc__)
    kind, out, command = sys.argv[1], sys.argv[2], sys.argv[4:]
    shutil.rmtree(out, ignore_errors=True)
    result = subprocess.run(command + ["--output", out])
    if result.returncode != 0:
        fail(f"the campaign exited {result.returncode}")
    checks[kind](out, command)
    print(f"{kind} campaign checks passed ({out})")


if __name__ == "__main__":
    main()
