#!/usr/bin/python3
"""The accuracy tables of docs/accuracy.md from the kept run tables.

One table per workload, one row per kind: runs, median truth, median
estimate, median |estimate - truth|, median accuracy (1 - |p(truth) -
p(estimate)|, the class's logistic score), how many runs' 95 % interval holds
the truth (coverage) and the interval's median width. The injected truth
leaves out what the machine itself took from the ranks; the kernel counts it
(schedstat run-queue delay), so a second coverage counts an interval that
meets [truth + low, truth + high], the bounds of that count on the critical
path the injector logged (machine_low_percent, machine_high_percent,
injected_truth.machine_path; for the contended kinds, which plant nothing,
the bounds alone). Run tables without those columns fall back to [truth,
truth + the count summed over ranks] (run_queue_percent; for a wall-clock
truth the clean runs' median count, which their reference time holds). None
where the ranks take turns on the CPUs (their run queue is the job's own). Tuning campaigns
(validation/kinds/) and held-out campaigns (validation/heldout/) are
printed apart, and so are the clean runs of packaged applications
(validation/clean/: no false alarms, one row per workload); the tuning
campaigns are summed up in one row per workload (their run tables hold
each run). The logistic score is Tremor's own, read from the report of
`--tremor` (default: build-mpich's).

usage: accuracy_tables.py [--root DIR] [--tremor B/estimators/tremor] [--update docs/accuracy.md]
Prints the tables; with --update, rewrites the part of the page between
its BEGIN/END GENERATED markers.
"""
import argparse
import csv
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign_common as common  # noqa: E402

# runs.csv's taking_turns where the ranks did not take turns on the CPUs.
NOT_TAKING_TURNS = ("False", "0")
# Kinds whose truth is the wall clock (kinds_campaign.CONTENDED).
WALL_CLOCK_KINDS = ("contended", "contended_window")
BEGIN = "<!-- BEGIN GENERATED: validation/campaigns/accuracy_tables.py -->"
END = "<!-- END GENERATED -->"


def number(value):
    return float(value) if value not in ("", None) else float("nan")


def median(values):
    values = sorted(v for v in values if v == v)
    if not values:
        return float("nan")
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else 0.5 * (values[middle - 1] + values[middle])


def machine_count(row):
    """The kernel's run-queue delay summed over ranks, % of the run; 0 where
    it does not measure the machine (ranks taking turns) or was not recorded."""
    if row.get("taking_turns") not in NOT_TAKING_TURNS or row.get("run_queue_percent") in ("", None):
        return 0.0
    return number(row["run_queue_percent"])


def truth_bands(rows, mine):
    """Per row [truth + low, truth + high], the bounds of what the machine
    took on the critical path (injector logs); without them [truth, truth +
    its summed count], for a wall-clock truth the clean runs' median count."""
    clean = [machine_count(r) for r in rows if r["kind"] == "clean"]
    reference = median(clean) if clean else 0.0
    bands = []
    for r in mine:
        truth = number(r["truth_percent"])
        if r.get("machine_high_percent") not in ("", None):
            if r.get("taking_turns") not in NOT_TAKING_TURNS:
                bands.append((truth, truth))
                continue
            planted = 0.0 if r["kind"] in WALL_CLOCK_KINDS else truth
            bands.append((planted + number(r["machine_low_percent"]), planted + number(r["machine_high_percent"])))
            continue
        machine = reference if r["kind"] in WALL_CLOCK_KINDS else machine_count(r)
        bands.append((truth, truth + (machine if machine == machine else 0.0)))
    return bands


def table(rows, scoring):
    lines = ["| kind | runs | median truth % | median estimate % | median abs(Δ) pp | median accuracy | "
             "interval coverage | coverage with the machine's own | machine's own pp (median low – high) | "
             "median width pp | recorded |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind in dict.fromkeys(r["kind"] for r in rows):
        mine = [r for r in rows if r["kind"] == kind]
        truth = [number(r["truth_percent"]) for r in mine]
        estimate = [number(r["primary_percent"]) for r in mine]
        low = [number(r["primary_ci_low"]) for r in mine]
        high = [number(r["primary_ci_high"]) for r in mine]
        covered = sum(1 for t, lo, hi in zip(truth, low, high) if lo <= t <= hi)
        banded = sum(1 for (t0, t1), lo, hi in zip(truth_bands(rows, mine), low, high) if lo <= t1 and t0 <= hi)
        band_text = f"{banded}/{len(mine)}" if any(r.get("taking_turns") not in ("", None) for r in mine) else "-"
        machine = [(number(r.get("machine_low_percent", "")), number(r.get("machine_high_percent", ""))) for r in mine
                   if r.get("taking_turns") in NOT_TAKING_TURNS]
        machine_text = (f"{median([m[0] for m in machine]):.2f} – {median([m[1] for m in machine]):.2f}"
                        if machine and all(m[1] == m[1] for m in machine) else "-")
        accuracy = [scoring.accuracy(t, e) for t, e in zip(truth, estimate)]
        recorded = ", ".join(sorted({r.get("date", "") for r in mine} - {""})) or "-"
        lines.append(f"| {kind} | {len(mine)} | {median(truth):.2f} | {median(estimate):.2f} | "
                     f"{median([abs(e - t) for e, t in zip(estimate, truth)]):.2f} | {median(accuracy):.3f} | "
                     f"{covered}/{len(mine)} | {band_text} | {machine_text} | "
                     f"{median([h - lo for h, lo in zip(high, low)]):.2f} | "
                     f"{recorded} |")
    return "\n".join(lines)


def tables(root, folder):
    """(path, rows) of each workload's run table in validation/<folder>/, by path."""
    found = []
    for path in sorted(glob.glob(os.path.join(root, "validation", folder, "*", "runs.csv"))):
        with open(path) as handle:
            rows = list(csv.DictReader(handle))
        if rows:
            found.append((path, rows))
    return found


def clean_section(root, folder, title):
    """One row per workload: its clean runs' readings, classes and intervals."""
    parts = [f"### {title}", "",
             "| workload | runs | median estimate % | largest % | classes | interval includes 0 or lies below 1.5 % | "
             "median run-queue delay % | run table |", "|---|---|---|---|---|---|---|---|"]
    for path, rows in tables(root, folder):
        estimate = [number(r["primary_percent"]) for r in rows]
        classes = ", ".join(f"{sum(r['class'] == c for r in rows)} {c}" for c in ("low", "medium", "high")
                            if any(r["class"] == c for r in rows))
        honest = sum(1 for r in rows if number(r["primary_ci_low"]) <= 0.0 or number(r["primary_ci_high"]) <= 1.5)
        queue = median([number(r.get("run_queue_percent", "")) for r in rows])
        parts.append(f"| {rows[0]['workload']} | {len(rows)} | {median(estimate):.2f} | {max(estimate):.2f} | {classes} | "
                     f"{honest}/{len(rows)} | {queue:.2f} | `{os.path.relpath(path, root)}` |")
    return parts + [""]


def tuning_section(root, folder, title, scoring):
    """One row per workload: its kinds' median |estimate - truth| and coverage, summed up."""
    parts = [f"### {title}", "",
             "| workload | kinds | runs | median abs(Δ) pp (median, largest over kinds) | median accuracy | "
             "interval coverage | recorded | run table |", "|---|---|---|---|---|---|---|---|"]
    for path, rows in tables(root, folder):
        errors, accuracy, covered = [], [], 0
        kinds = list(dict.fromkeys(r["kind"] for r in rows))
        for kind in kinds:
            mine = [r for r in rows if r["kind"] == kind]
            errors.append(median([abs(number(r["primary_percent"]) - number(r["truth_percent"])) for r in mine]))
        for r in rows:
            truth = number(r["truth_percent"])
            accuracy.append(scoring.accuracy(truth, number(r["primary_percent"])))
            covered += number(r["primary_ci_low"]) <= truth <= number(r["primary_ci_high"])
        recorded = ", ".join(sorted({r.get("date", "") for r in rows} - {""})) or "-"
        parts.append(f"| {rows[0]['workload']} | {len(kinds)} | {len(rows)} | {median(errors):.2f}, {max(errors):.2f} | "
                     f"{median(accuracy):.3f} | {covered}/{len(rows)} | {recorded} | `{os.path.relpath(path, root)}` |")
    return parts + [""]


def section(root, folder, title, scoring):
    parts = [f"### {title}", ""]
    found = False
    for path in sorted(glob.glob(os.path.join(root, "validation", folder, "*", "runs.csv"))):
        with open(path) as handle:
            rows = list(csv.DictReader(handle))
        if not rows:
            continue
        found = True
        workload = rows[0]["workload"]
        plot = os.path.join(os.path.dirname(path), "kinds.png")
        parts += [f"**{workload}** (`{os.path.relpath(path, root)}`)", "", table(rows, scoring), ""]
        if os.path.exists(plot):
            parts += [f"![{workload}](../{os.path.relpath(plot, root)})", ""]
    if not found:
        parts += ["None recorded yet.", ""]
    return parts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=common.REPOSITORY)
    parser.add_argument("--tremor", default=os.path.join(common.REPOSITORY, "build-mpich", "estimators", "tremor"),
                        help="the tremor whose class limits and logistic score the tables")
    parser.add_argument("--update", metavar="PAGE")
    args = parser.parse_args()
    if not os.access(args.tremor, os.X_OK):
        parser.error(f"{args.tremor}: no tremor executable (build one, or name it with --tremor)")
    scoring = common.Scoring.of_tremor(args.tremor)
    lines = section(args.root, "heldout", "Held out (recorded after the model was frozen)", scoring)
    lines += clean_section(args.root, "clean", "Clean runs of packaged applications (recorded after the model was frozen)")
    lines += tuning_section(args.root, "kinds", "Tuning campaigns (the latest of each kind, the estimator before this model)",
                            scoring)
    text = "\n".join(lines).rstrip() + "\n"
    print(text)
    if args.update:
        page = open(args.update).read()
        start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
        with open(args.update, "w") as handle:
            handle.write(page[:start] + "\n" + text + page[end:])


if __name__ == "__main__":
    main()
