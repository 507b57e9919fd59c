"""The live tests' tolerances, computed from the campaign tables committed in
the repository each time a test imports them: no constant is copied out of a
table, so none can outlive its data. A missing table, column or number raises
CalibrationError (the importing test fails).

Tables (quiet campaigns of the bundled demo, 2 MPICH ranks, 2-core VM):
- validation/kinds/demo/runs.csv: kinds_campaign.py, 3-9 runs per kind;
- validation/diagnosis/runs.csv: diagnosis_campaign.py, 5 runs per kind;
- docs/validation/scale-2core-*/comparisons.csv: scale_campaign.py on the
  same VM (ftq_sleep, Open MPI).
Every tolerance is the mean ± K·σ of the figure; test/repository/
check_calibrations.py prints them all.
"""
import csv
import math
import os
import statistics

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS_DEMO = os.path.join(REPOSITORY, "validation", "kinds", "demo", "runs.csv")
DIAGNOSIS = os.path.join(REPOSITORY, "validation", "diagnosis", "runs.csv")
SCALE_2CORE = [os.path.join(REPOSITORY, "docs", "validation", name, "comparisons.csv")
               for name in ("scale-2core-quiet", "scale-2core-quiet-normal", "scale-2core-shared")]
K_SIGMA = 4.0
INJECTED_KINDS = ("sparse", "most_p0.5", "most_p0.9", "window", "slow_rank", "io_only")
CLEAN_KINDS = ("clean", "checkpoint", "io_clean", "clean_long")


class CalibrationError(RuntimeError):
    """A table a tolerance is computed from is missing or incomplete."""


def rows_of(path, columns):
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise CalibrationError(f"calibration table {path}: {error}") from None
    missing = [c for c in columns if not rows or c not in rows[0]]
    if missing:
        raise CalibrationError(f"calibration table {path}: no rows or no column {missing}")
    return rows


def number(row, column, path):
    try:
        value = float(row[column])
    except (TypeError, ValueError):
        raise CalibrationError(f"{path}: {column} is not a number: {row[column]!r}") from None
    if not math.isfinite(value):
        raise CalibrationError(f"{path}: {column} is not finite: {row[column]!r}")
    return value


def grouped(rows, key, value, path, least=2):
    """{key: [value of each row]}, every group with at least `least` values."""
    groups = {}
    for row in rows:
        groups.setdefault(row[key], []).append(value(row))
    small = {k: len(v) for k, v in groups.items() if len(v) < least}
    if not groups or small:
        raise CalibrationError(f"{path}: too few runs to calibrate: {small or 'none'}")
    return groups


def pooled_sigma(groups):
    """σ of the values about their own group's mean, pooled; with its degrees of freedom."""
    squares = sum((v - statistics.mean(values)) ** 2 for values in groups.values() for v in values)
    freedom = sum(len(values) - 1 for values in groups.values())
    return math.sqrt(squares / freedom), freedom


def injected_kinds(path=KINDS_DEMO):
    """The primary estimate less the injected truth, pp: ({kind: mean}, pooled σ, d.o.f.)."""
    rows = [r for r in rows_of(path, ("kind", "primary_percent", "truth_percent")) if r["kind"] in INJECTED_KINDS]
    groups = grouped(rows, "kind", lambda r: number(r, "primary_percent", path) - number(r, "truth_percent", path),
                     path)
    if set(groups) != set(INJECTED_KINDS):
        raise CalibrationError(f"{path}: kinds {sorted(set(INJECTED_KINDS) - set(groups))} missing")
    sigma, freedom = pooled_sigma(groups)
    return {kind: statistics.mean(values) for kind, values in groups.items()}, sigma, freedom


def quiet_floor(path=KINDS_DEMO):
    """What a run without injection reads at most, %: mean + K·σ of the clean kinds' primary estimate."""
    values = [number(r, "primary_percent", path) for r in rows_of(path, ("kind", "primary_percent"))
              if r["kind"] in CLEAN_KINDS]
    if len(values) < 5:
        raise CalibrationError(f"{path}: {len(values)} clean runs")
    return statistics.mean(values) + K_SIGMA * statistics.stdev(values), len(values)


def clean_run_noise(path=KINDS_DEMO):
    """σ, %, of a clean run's intrinsic run time and of its run time about the mean of
    its kind's runs (pooled over the clean kinds), and the degrees of freedom."""
    rows = [r for r in rows_of(path, ("kind", "intrinsic_run_time_s", "run_time_s")) if r["kind"] in CLEAN_KINDS]
    result = []
    for column in ("intrinsic_run_time_s", "run_time_s"):
        groups = grouped(rows, "kind", lambda r: number(r, column, path), path)
        relative = {k: [100.0 * v / statistics.mean(values) for v in values] for k, values in groups.items()}
        result.append(pooled_sigma(relative))
    return result[0][0], result[1][0], result[0][1]


def diagnosis(path=DIAGNOSIS):
    """{figure: (mean, σ, runs)} of diagnosis_campaign.py's runs: the slow rank's charge
    less the truth (pp; kinds slow_rank and slow_rank10), the best episode's IoU with
    the window, the file I/O's share of the lost time."""
    rows = rows_of(path, ("kind", "truth_percent", "first_rank", "first_lost_percent", "best_iou", "io_share"))
    figures = {
        "slow_rank_error_pp": [number(r, "first_lost_percent", path) - number(r, "truth_percent", path)
                               for r in rows if r["kind"] in ("slow_rank", "slow_rank10") and r["first_rank"] == "1"],
        "window_iou": [number(r, "best_iou", path) for r in rows if r["kind"] == "window"],
        "io_share": [number(r, "io_share", path) for r in rows if r["kind"] == "io_only"]}
    result = {}
    for name, values in figures.items():
        if len(values) < 3:
            raise CalibrationError(f"{path}: {len(values)} runs for {name}")
        result[name] = (statistics.mean(values), statistics.stdev(values), len(values))
    return result


def scale_error(paths=SCALE_2CORE, workload="ftq-normal", factor=2):
    """|mean| + K·σ of the headline prediction's relative error, (median − actual) /
    actual, at `factor` times the base size for Normal sleeps; and the pairs counted."""
    errors = []
    for path in paths:
        for row in rows_of(path, ("workload", "method", "factor", "relative_error")):
            if row["workload"] == workload and row["method"] == "headline" and int(row["factor"]) == factor:
                errors.append(number(row, "relative_error", path))
    if len(errors) < 10:
        raise CalibrationError(f"{paths}: {len(errors)} headline predictions of {workload} at factor {factor}")
    return abs(statistics.mean(errors)) + K_SIGMA * statistics.stdev(errors), len(errors)
