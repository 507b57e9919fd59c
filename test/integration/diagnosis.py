#!/usr/bin/env python3
"""The diagnosis (where, when, what; docs/report.md) against injected truth on
the bundled BSP demo.

usage: diagnosis.py --kind KIND --preload PROFILER --injector LIB --launcher CMD --np N
                    [--calibrate N] -- BSP_DEMO
Kinds (the bounds: TOLERANCES below):
  slow_rank  rank 1 runs 25 % slower (TREMOR_INJECT_SLOWDOWN, injector in front
             of the profiler, so the delay is time outside MPI, as a slow core
             would be): rank 1 is named first, `slow`, its charge within the
             band of the injected critical path
  asleep_in_boundary
             rank 1 sleeps 1 +- 0.2 ms inside every boundary collective
             (injector behind the profiler): no segment is clean, so only the
             time off the CPU inside the collective shows it; the primary
             estimate is within the band of the injected critical path, and
             at least the truth less the band is measured off the CPU
  window     every rank, 80 % of collectives delayed 3 ± 0.5 ms between 0.4 s
             and 0.9 s after MPI_Init: an episode matches the window (IoU)
  io_only    rank 1, half of its checkpoint writes delayed 25 ± 5 ms: the file
             I/O's share of the lost time
  clean      no injection: no slow rank, no episode
The truth is the injected critical path from the injector's own logs
(validation/campaigns/injected_truth.py; the collectives are traced).
Tolerances are k·σ of a quiet calibration (--calibrate N prints the figures;
TOLERANCES below), widened by what the machine was measured to add to the run
(the ranks' run queue and steal, test/common/tremor_testing.py), which Tremor
rightly reports as interference. A known-wrong estimator must land outside
them: the paper's 4·MAD where delays are widespread (asleep_in_boundary,
slow_rank). A failed timing check is run once more only when the machine was
measured busy (it added more than the check's tolerance); failing again there
skips the test (exit 77) with the reason, never passes it.
"""
import argparse
import glob
import json
import os
import sys
import tempfile

import h5py


from launch import (add_launch_arguments, environment_without_tremor, launched_program, mpi_command,
                    run_preloaded_measured)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from injected_truth import TRACE_SETTINGS, injected_percent  # noqa: E402
from tremor_testing import CheckFailed, TimingCheckFailed, check, print_calibration, with_one_retry  # noqa: E402

BASE = ["-n", "400", "-u", "2000", "-k", "0", "-q"]
WINDOW = (0.4, 0.9)
KINDS = {
    "slow_rank": ("front", {"TREMOR_INJECT_CALLS": "p2p,coll", "TREMOR_INJECT_RANKS": "1",
                            "TREMOR_INJECT_SLOWDOWN": "0.25"}, BASE),
    "asleep_in_boundary": ("behind", {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_RANKS": "1",
                                      "TREMOR_INJECT_PROBABILITY": "1", "TREMOR_INJECT_MEAN_US": "1000",
                                      "TREMOR_INJECT_SD_US": "200"}, BASE),
    "window": ("behind", {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.8",
                          "TREMOR_INJECT_AFTER_S": str(WINDOW[0]), "TREMOR_INJECT_FOR_S": str(WINDOW[1] - WINDOW[0]),
                          "TREMOR_INJECT_MEAN_US": "3000", "TREMOR_INJECT_SD_US": "500"}, BASE),
    "io_only": ("behind", {"TREMOR_INJECT_CALLS": "posix", "TREMOR_INJECT_RANKS": "1",
                           "TREMOR_INJECT_PROBABILITY": "0.5", "TREMOR_INJECT_MEAN_US": "25000",
                           "TREMOR_INJECT_SD_US": "5000"}, ["-n", "400", "-u", "2000", "-k", "10", "-q"]),
    "clean": (None, {}, BASE),
}
# k·σ (k = 4) of quiet calibrations on the idle 2-core Debian 12 VM, MPICH
# 4.0.2 (the runs' files in docs/validation/):
# - slow_rank: rank 1's charge less the truth, mean +0.42 pp, σ 0.86 pp over
#   10 runs of diagnosis_campaign.py (its slow_rank and slow_rank10 kinds,
#   docs/validation/diagnosis, 2026-11-24);
# - window: the best IoU 0.974, σ 0.003 with MPICH (5 runs, the same
#   campaign); with Open MPI 0.957, σ 0.025 (10 runs of `diagnosis.py --kind
#   window --calibrate 10`, 2026-11-26, its launcher's own processes taking
#   4-6 % of each run from the ranks): the wider one sets the bound;
# - io_only: the share of the lost time in file I/O 0.824, σ 0.016 (5 runs,
#   the same campaign);
# - asleep_in_boundary (a delay in every boundary collective of rank 1): the
#   kinds campaigns' most_p0.9 (rank 1, 90 % of its collectives): the estimate
#   less the truth +0.52 pp, and the pooled σ of the injected kinds' errors
#   about their means 0.23 pp (docs/validation/kinds{,-check,-nine}/demo,
#   2026-11-25/26). Its delays are measured off the CPU: at least the truth
#   less the same band.
TOLERANCES = {"slow_rank_bias_pp": 0.42, "slow_rank_pp": 4 * 0.86,
              "asleep_bias_pp": 0.52, "asleep_pp": 4 * 0.23,
              "window_iou": 0.957 - 4 * 0.025, "io_share": 0.824 - 4 * 0.016}


def iou(a, b):
    overlap = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


def check_kind(kind, report, truth, added, figures):
    """added: what the machine was measured to add, % of the run; figures: the
    calibration's figures of this run."""
    diagnosis = report["diagnosis"]
    check(diagnosis is not None, "the report has a diagnosis")
    slow, episodes, lost = diagnosis["slow_ranks"], diagnosis["episodes"], diagnosis["components"]["lost"]
    print(f"{kind}: truth {truth:.2f} %, lost {report['lost_percent']:.2f} % (4·MAD {report['paper_mad4_percent']:.2f} "
          f"%); the machine added {added:.2f} %; slow ranks "
          f"{[(r['rank'], r['kind'], round(r['lost_percent'], 2)) for r in slow]}; episodes "
          f"{[(round(e['start_s'], 3), round(e['end_s'], 3), round(e['lost_percent'], 2)) for e in episodes]}; "
          f"lost split {lost}")
    if kind == "slow_rank":
        # The injected slow rank sleeps outside MPI: the primary estimate counts it
        # as measured off-CPU time (docs/statistics-primary.md, "Measured delays").
        named = [r for r in slow if r["rank"] == 1]
        if named:
            figures["slow_rank_error_pp"] = named[0]["lost_percent"] - truth
        check(slow and slow[0]["rank"] == 1, f"rank 1 named first: {slow}", timing=True)
        check(slow[0]["kind"] == "slow", f"rank 1 is slow, not loaded: {slow[0]}", timing=True)
        bound, bias = TOLERANCES["slow_rank_pp"] + added, TOLERANCES["slow_rank_bias_pp"]
        check(abs(slow[0]["lost_percent"] - truth - bias) <= bound,
              f"rank 1 charged {slow[0]['lost_percent']:.2f} %, injected {truth:.2f} % (+-{bound:.2f})", timing=True)
        # Its sleep is no wait for its own threads (none ran): the headline holds it.
        check(abs(report["lost_percent"] - truth) <= bound,
              f"primary {report['lost_percent']:.2f} %, injected {truth:.2f} % (+-{bound:.2f})", timing=True)
        check(abs(report["paper_mad4_percent"] - truth - bias) > bound,
              f"the paper's 4·MAD ({report['paper_mad4_percent']:.2f} %) is within the tolerance", timing=True)
    elif kind == "asleep_in_boundary":
        measured = 100.0 * report["primary"]["rank_excess_s"] / report["run_time_s"]
        bound, bias = TOLERANCES["asleep_pp"] + added, TOLERANCES["asleep_bias_pp"]
        figures["asleep_error_pp"] = report["lost_percent"] - truth
        figures["asleep_measured_share"] = measured / truth if truth > 0 else float("nan")
        check(abs(report["lost_percent"] - truth - bias) <= bound,
              f"{report['lost_percent']:.2f} % lost, injected {truth:.2f} % (+-{bound:.2f})", timing=True)
        check(abs(report["paper_mad4_percent"] - truth - bias) > bound,
              f"the paper's 4·MAD ({report['paper_mad4_percent']:.2f} %) is within the tolerance", timing=True)
        check(measured >= truth - TOLERANCES["asleep_pp"] - added,
              f"{measured:.2f} % measured off the CPU, injected {truth:.2f} %", timing=True)
    elif kind == "window":
        best = max((iou((e["start_s"], e["end_s"]), WINDOW) for e in episodes), default=0.0)
        figures["window_iou"] = best
        check(best >= TOLERANCES["window_iou"],
              f"an episode matches the window {WINDOW} with IoU >= {TOLERANCES['window_iou']:.2f} (best {best:.2f})",
              timing=True)
    elif kind == "io_only":
        total = lost["compute"] + lost["mpi"] + lost["io"]
        figures["io_share"] = lost["io"] / total if total > 0 else float("nan")
        check(total > 1.0 and lost["io"] >= TOLERANCES["io_share"] * total - added,
              f"at least {TOLERANCES['io_share']:.0%} of the lost time in file I/O: {lost}", timing=True)
    else:
        check(not slow, f"a clean run names no slow rank: {slow}", timing=True)
        check(not episodes, f"a clean run names no episode: {episodes}", timing=True)


# A run is busy when the machine added more than the kind's tolerance, % of the
# run; the kinds checked without a percentage use the injected kinds' band.
BUSY_PERCENT = {"slow_rank": TOLERANCES["slow_rank_pp"], "asleep_in_boundary": TOLERANCES["asleep_pp"],
                "window": TOLERANCES["asleep_pp"], "io_only": TOLERANCES["asleep_pp"],
                "clean": TOLERANCES["asleep_pp"]}


def run_once(opts, program, figures=None):
    """One run and its checks; returns the machine's load in words."""
    order, settings, arguments = KINDS[opts.kind]
    words = opts.preload.split()  # the profiler, after a sanitizer runtime if any
    prefix, profiler = words[:-1], words[-1]
    libraries = {"front": [opts.injector, profiler], "behind": [profiler, opts.injector], None: [profiler]}[order]
    with tempfile.TemporaryDirectory(prefix="tremor-diagnosis-") as out:
        env = environment_without_tremor()
        env.update(settings, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none", TREMOR_INJECT_SEED="11",
                   LD_PRELOAD=" ".join(prefix + libraries))
        if order is not None:
            env.update(TRACE_SETTINGS)
        result, load = run_preloaded_measured(mpi_command(opts.launcher, opts.np, program + arguments + ["-O", out]),
                                              env, timeout=300)
        check(result.returncode == 0, f"the demo exited with {result.returncode}: {result.stderr[-2000:]}")
        files = glob.glob(os.path.join(out, "*.h5"))
        check(len(files) == 1, f"one run file, found {files}")
        with h5py.File(files[0], "r") as h5:
            truth = injected_percent(h5)
            report = json.loads(h5["analysis/report_json"][()])
        added = load.percent(report["run_time_s"])
        try:
            # The bands widen by what the machine added, at most by the kind's
            # tolerance: beyond it the run is busy, and a miss there is excused
            # (retried once, then skipped), never passed.
            check_kind(opts.kind, report, truth, min(added, BUSY_PERCENT[opts.kind]),
                       {} if figures is None else figures)
        except TimingCheckFailed as error:
            error.busy = added > BUSY_PERCENT[opts.kind]
            error.machine = load.describe(report["run_time_s"])
            raise
        finally:
            if figures is not None:
                figures["machine_percent"] = added
        return load.describe(report["run_time_s"])


def calibrate(opts, program):
    """--calibrate N: the figures the tolerances come from, per run and over the quiet runs."""
    rows = []
    for run in range(opts.calibrate):
        figures = {}
        try:
            run_once(opts, program, figures)
        except CheckFailed as error:
            print(f"run {run}: {error}")
        print(f"run {run}: {figures}", flush=True)
        rows.append(figures)
    print_calibration(rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", required=True, choices=sorted(KINDS))
    parser.add_argument("--injector", required=True)
    parser.add_argument("--calibrate", type=int, default=0, metavar="N",
                        help="run N times and print the figures the tolerances are derived from")
    add_launch_arguments(parser)
    opts = parser.parse_args()
    program = launched_program(opts)
    if opts.calibrate:
        calibrate(opts, program)
        return 0
    with_one_retry(lambda: run_once(opts, program), opts.kind)
    print(f"{opts.kind}: checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
