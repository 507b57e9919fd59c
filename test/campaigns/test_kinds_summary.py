#!/usr/bin/env python3
"""The kinds campaign's bound on what any estimator could score against a
wall-clock truth (kinds_campaign.exact_estimate_accuracies), on rows whose
values are known by construction:

- clean runs of 1.0, 1.1 and 1.15 s put the reference at 1.1 s;
- a run beside a busy loop that took 1.25 s then has a wall-clock truth of
  0.15 / 1.25 (12 %, on the logistic's steep part); had its own clean time
  been 1.0 or 1.15 s, an estimate exact for it would read 20 % or 8 %, and
  against the median clean run it matches the truth;
- an injected kind has no such bound (its truth is not the wall clock);
- the summary shows the median and 10 % quantile over those pairs, the
  median run queue, and for an injected kind the accuracy against the truth
  plus the run queue (10.4 % read for 10.0 % planted and 0.5 % queued),
  which ranks taking turns on the CPUs leave out;
- the intrinsic run time against the clean runs' median: +2 % and −1 %.

With --tremor, the class limits and logistic the campaigns read from that
build's report (campaign_common.Scoring) are those of
docs/statistics.md#classification.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "validation", "campaigns"))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import numpy as np  # noqa: E402

import kinds_campaign  # noqa: E402

# docs/statistics.md#classification: low < 7.5 % <= medium <= 15 % < high; p = logistic(0.35, 11.25 %).
SCORING = common.Scoring({"medium_from_percent": 7.5, "high_above_percent": 15.0, "logistic_steepness": 0.35,
                          "logistic_midpoint_percent": 11.25})


def row(kind, run, time_s, truth=0.0, primary=0.0, intrinsic_s=None):
    return {"workload": "app", "kind": kind, "run": run, "run_time_s": time_s, "truth_percent": truth,
            "primary_percent": primary, "mad4_percent": primary, "wall_percent": "", "run_queue_percent": 0.5,
            "machine_low_percent": 0.1, "machine_high_percent": 0.5,
            "intrinsic_run_time_s": time_s if intrinsic_s is None else intrinsic_s}


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tremor", help="also check the scoring read from this tremor's report")
    args = parser.parse_args()
    if args.tremor:
        read = common.Scoring.of_tremor(args.tremor)
        if read != SCORING:
            fail(f"scoring read from the report {vars(read)} for {vars(SCORING)}")
        if [read.interference_class(x) for x in (7.4999, 7.5, 15.0, 15.0001)] != ["low", "medium", "medium", "high"]:
            fail("class limits read from the report misplaced")
    rows = [row("clean", 0, 1.0), row("clean", 1, 1.1), row("clean", 2, 1.15),
            row("contended_window", 0, 1.25, intrinsic_s=1.122),
            row("sparse", 0, 1.3, truth=10.0, primary=10.4, intrinsic_s=1.089)]
    kinds_campaign.add_wall_clock(rows)
    contended = rows[3]
    truth = 100.0 * 0.15 / 1.25
    if abs(contended["truth_percent"] - truth) > 1e-9:
        fail(f"wall-clock truth {contended['truth_percent']} for {truth}")

    p = SCORING.probability_high
    expected = sorted(1.0 - abs(p(truth) - p(100.0 * exact / 1.25)) for exact in (0.25, 0.15, 0.10))
    got = sorted(kinds_campaign.exact_estimate_accuracies(rows, contended, SCORING))
    if len(got) != 3 or max(abs(a - b) for a, b in zip(got, expected)) > 1e-12:
        fail(f"exact-estimate accuracies {got} for {expected}")
    if got[-1] != 1.0 or got[1] > 0.7:
        fail(f"the median clean run must score 1 and one 0.1 s away far less: {got}")
    if kinds_campaign.exact_estimate_accuracies(rows, rows[4], SCORING):
        fail("an injected truth has no wall-clock bound")

    summary = kinds_campaign.summarize(rows, SCORING)
    line = next(x for x in summary.splitlines() if "| contended_window |" in x)
    cells = [c.strip() for c in line.strip("|").split("|")]
    want = f"{np.median(expected):.3f} / {np.quantile(expected, 0.1):.3f}"
    # A contended kind plants nothing: scored against the machine's high bound alone.
    alone = 1.0 - abs(p(0.5) - p(0.0))
    if cells[-4] != want or cells[-3] != "0.50" or cells[-2] != f"{alone:.3f} / {alone:.3f}" or \
            cells[-1] != "+2.00 / +2.00":
        fail(f"summary cells {cells[-4:]} for [{want}, 0.50, {alone:.3f} / {alone:.3f}, +2.00 / +2.00]")
    sparse = [c.strip() for c in next(x for x in summary.splitlines() if "| sparse |" in x).strip("|").split("|")]
    score = 1.0 - abs(p(10.5) - p(10.4))
    if sparse[-4] != "-" or sparse[-2] != f"{score:.3f} / {score:.3f}" or sparse[-1] != "-1.00 / -1.00":
        fail(f"sparse cells {sparse[-4:]} for [-, 0.50, {score:.3f} / {score:.3f}, -1.00 / -1.00]")
    for r in rows:  # run tables without the machine's bounds (an older injector): not scored
        r["machine_low_percent"] = r["machine_high_percent"] = ""
    unlogged = next(x for x in kinds_campaign.summarize(rows, SCORING).splitlines() if "| sparse |" in x)
    if not unlogged.rstrip().endswith("| - | -1.00 / -1.00 |"):
        fail(f"scored against a machine's part that was not logged: {unlogged}")
    for r in rows:
        r["machine_low_percent"], r["machine_high_percent"] = 0.1, 0.5
    rows[4]["taking_turns"] = True
    taking_turns = next(x for x in kinds_campaign.summarize(rows, SCORING).splitlines() if "| sparse |" in x)
    if not taking_turns.rstrip().endswith("| - | -1.00 / -1.00 |"):
        fail(f"ranks taking turns scored against their own run queue: {taking_turns}")
    print("PASS: exact-estimate accuracy against a wall-clock truth, accuracy with the machine's own, intrinsic time, "
          "summary cells" + (", the report's class limits and logistic" if args.tremor else ""))


if __name__ == "__main__":
    main()
