#!/usr/bin/python3
"""Two analyses of the same kept run files side by side: per workload and
kind, the median |estimate - truth| of each, its change, how many runs each
classes as the truth is classed, and the interval's coverage and median
width. Input: the runs.csv that kinds_campaign.py --reanalyse wrote with each
build (same --keep folder, same kinds and runs).

usage: compare_estimators.py OLD_RUNS.csv NEW_RUNS.csv [--output SUMMARY.md]
Writes a markdown table (printed, and to --output when given). Exit status 1
when a workload and kind's median |estimate - truth| is more than 0.2 pp
worse, or fewer runs are classed as their truth (the no-regression rule of
docs/accuracy.md), else 0.
"""
import argparse
import csv
import sys

import numpy as np

TOLERANCE_PP = 0.2


def read_rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def number(value):
    return float(value) if value not in ("", None) else float("nan")


def by_kind(rows):
    grouped = {}
    for row in rows:
        grouped.setdefault((row["workload"], row["kind"]), []).append(row)
    return grouped


def errors(rows):
    return np.array([abs(number(r["primary_percent"]) - number(r["truth_percent"])) for r in rows])


def classed_right(rows):
    return sum(1 for r in rows if r["class"] == r["truth_class"])


def coverage(rows):
    inside = [number(r["primary_ci_low"]) <= number(r["truth_percent"]) <= number(r["primary_ci_high"]) for r in rows]
    widths = [number(r["primary_ci_high"]) - number(r["primary_ci_low"]) for r in rows]
    return float(np.mean(inside)), float(np.median(widths))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--output")
    args = parser.parse_args()
    old, new = by_kind(read_rows(args.old)), by_kind(read_rows(args.new))
    lines = ["| workload | kind | runs | median abs(Δ) old pp | median abs(Δ) new pp | change pp | "
             "classed as truth old / new | coverage old / new | median width old / new pp |",
             "|---|---|---|---|---|---|---|---|---|"]
    regressed = []
    for key in old:
        if key not in new:
            continue
        before, after = errors(old[key]), errors(new[key])
        change = float(np.median(after) - np.median(before))
        right_old, right_new = classed_right(old[key]), classed_right(new[key])
        cover_old, width_old = coverage(old[key])
        cover_new, width_new = coverage(new[key])
        if change > TOLERANCE_PP or right_new < right_old:
            regressed.append(key)
        lines.append(f"| {key[0]} | {key[1]} | {len(new[key])} | {np.median(before):.2f} | {np.median(after):.2f} | "
                     f"{change:+.2f} | {right_old} / {right_new} | {cover_old:.2f} / {cover_new:.2f} | "
                     f"{width_old:.2f} / {width_new:.2f} |")
    text = "\n".join(lines) + "\n"
    if regressed:
        text += "\nWorse by more than 0.2 pp, or classed right less often: " + \
            ", ".join(f"{w} {k}" for w, k in regressed) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(text)
    sys.exit(1 if regressed else 0)


if __name__ == "__main__":
    main()
