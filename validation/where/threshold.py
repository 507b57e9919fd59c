#!/usr/bin/python3
"""The naming threshold of the diagnosis (kMinNamedExcessPercent in
estimators/analysis/include/tremor/analysis/diagnosis.hpp), derived from clean
calibration runs that the campaign does not report.

A rank (node) is named slow when its interference charge exceeds an equal
share of all charges (its part of the ranks) by more than the threshold, % of
the run. In a run with nothing planted, every such excess is the machine's
own interference falling unevenly on the ranks. The calibration table
(validation/where/calibration.csv, where_campaign.py --stage calibrate) holds
each clean run's largest excess over its ranks and nodes; the threshold is
their mean + K·σ (K = 4, as every tolerance of the live tests,
test/common/calibration.py), rounded up to 0.1 pp, and never below the
largest excess seen.

usage: threshold.py [--table calibration.csv] [--check]
--check: exit 1 unless the header's constant is the derived value.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
HEADER = os.path.join(REPOSITORY, "estimators", "analysis", "include", "tremor", "analysis", "diagnosis.hpp")
K_SIGMA = 4.0


def largest_excesses(path):
    """Each clean calibration run's largest excess (rank or node), pp."""
    with open(path, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["stage"] == "calibrate" and not r["planted"]]
    if len(rows) < 2:
        raise SystemExit(f"{path}: fewer than 2 clean calibration runs")
    return [max(float(r["largest_rank_excess_pp"]),
                float(r["largest_node_excess_pp"]) if r["largest_node_excess_pp"] else 0.0) for r in rows]


def derive(excesses):
    bound = statistics.mean(excesses) + K_SIGMA * statistics.stdev(excesses)
    return math.ceil(10.0 * max(bound, max(excesses)) - 1e-9) / 10.0


def header_value():
    with open(HEADER) as handle:
        match = re.search(r"kMinNamedExcessPercent\s*=\s*([0-9.]+)\s*;", handle.read())
    if match is None:
        raise SystemExit(f"{HEADER}: no kMinNamedExcessPercent")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", default=os.path.join(HERE, "calibration.csv"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    excesses = largest_excesses(args.table)
    value = derive(excesses)
    print(f"{len(excesses)} clean calibration runs: largest excess mean {statistics.mean(excesses):.3f} pp, "
          f"sd {statistics.stdev(excesses):.3f} pp, max {max(excesses):.3f} pp; threshold (mean + {K_SIGMA:g} sd, "
          f"at least the max, up to 0.1 pp) {value:.1f} pp; diagnosis.hpp has {header_value():g}")
    if args.check and abs(header_value() - value) > 1e-9:
        print(f"CHECK FAILED: kMinNamedExcessPercent is {header_value():g}, the calibration gives {value:.1f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
