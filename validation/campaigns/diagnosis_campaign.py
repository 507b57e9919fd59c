#!/usr/bin/python3
"""Diagnosis campaign: where, when and what (docs/report.md, step 9) against
injected truth, one row per run, for each kind of interference.

Workload: the bundled bulk-synchronous demo (bsp_demo) on 2 MPICH processes,
400 iterations of 2 or 4 ms of compute, a fixed number of compute units per
microsecond (-c) so every run does the same work. Kinds:

  clean        no injection: no slow rank and no episode may be named
  slow_rank    rank 1 runs 20 % slower (TREMOR_INJECT_SLOWDOWN=0.2)
  slow_rank10  rank 1 runs 10 % slower
  window       every rank, 80 % of collectives delayed by 1.5 ± 0.3 ms between
               0.4 s and 0.9 s after MPI_Init
  io_only      rank 1, a third of its checkpoint writes (every 10 iterations)
               delayed by 15 ± 5 ms
The slow-rank kinds load the injector in front of the profiler, so the delay
is time outside MPI on rank 1 (as on a slow core); the others load it behind
the profiler, so a delay is inside the MPI or I/O call it delays.

Truth: the injected critical path of /injection (per segment the largest
delay sum over ranks, summed, % of the run time); the window's interval; the
I/O family. Scores per run: the rank named first and its charge against the
truth (slow ranks), the best IoU of an episode with the window, the I/O share
of the lost time, and whether a clean run named anything.

usage: diagnosis_campaign.py --build BUILD_DIR [--kinds k1,k2] [--runs N] [--output DIR]
Writes DIR/runs.csv and DIR/summary.md and prints the summary.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

import injected_truth  # noqa: E402

BASE = ["-n", "400", "-u", "2000", "-k", "0"]
WINDOW = (0.4, 0.9)
SLOW = {"TREMOR_INJECT_CALLS": "p2p,coll", "TREMOR_INJECT_RANKS": "1"}
KINDS = {
    "clean": (None, {}, BASE),
    "slow_rank": ("front", {**SLOW, "TREMOR_INJECT_SLOWDOWN": "0.2"}, BASE),
    "slow_rank10": ("front", {**SLOW, "TREMOR_INJECT_SLOWDOWN": "0.1"}, BASE),
    "window": ("behind", {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.8",
                          "TREMOR_INJECT_AFTER_S": str(WINDOW[0]), "TREMOR_INJECT_FOR_S": str(WINDOW[1] - WINDOW[0]),
                          "TREMOR_INJECT_MEAN_US": "1500", "TREMOR_INJECT_SD_US": "300"}, BASE),
    "io_only": ("behind", {"TREMOR_INJECT_CALLS": "posix", "TREMOR_INJECT_RANKS": "1",
                           "TREMOR_INJECT_PROBABILITY": "0.33", "TREMOR_INJECT_MEAN_US": "15000",
                           "TREMOR_INJECT_SD_US": "5000"}, ["-n", "400", "-u", "2000", "-k", "10"]),
}
COLUMNS = ["kind", "run", "truth_percent", "lost_percent", "first_rank", "first_kind", "first_lost_percent",
           "slow_ranks", "episodes", "best_iou", "io_share", "run_time_s", "load_1min"]


def iou(a, b):
    overlap = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    return overlap / (max(a[1], b[1]) - min(a[0], b[0]))


def run_once(build, kind, run, units, work):
    order, settings, arguments = KINDS[kind]
    out = os.path.join(work, f"{kind}-{run}")
    os.makedirs(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_")}
    env.update(TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none", TREMOR_INJECT_SEED=str(11 + run), **settings,
               **injected_truth.TRACE_SETTINGS)
    profiler = os.path.join(build, "interpose", "libtremor-mpich.so")
    injector = os.path.join(build, "injector", "libtremor-inject-mpich.so")
    env["LD_PRELOAD"] = " ".join({"front": [injector, profiler], "behind": [profiler, injector],
                                  None: [profiler]}[order])
    demo = os.path.join(build, "test", "integration", "bsp_demo")
    subprocess.run(["mpiexec.mpich", "-n", "2", demo, *arguments, "-c", units, "-q", "-O", out], env=env,
                   check=True, capture_output=True, timeout=600)
    path = glob.glob(os.path.join(out, "*.h5"))[0]
    with h5py.File(path, "r") as h5:
        truth = injected_truth.injected_percent(h5)
        report = json.loads(h5["analysis/report_json"][()])
    diagnosis = report["diagnosis"] or {"slow_ranks": [], "episodes": [], "components": {"lost": {}}}
    slow, episodes, lost = diagnosis["slow_ranks"], diagnosis["episodes"], diagnosis["components"]["lost"]
    lost_total = sum(lost.get(c, 0.0) for c in ("compute", "mpi", "io"))
    first = slow[0] if slow else {"rank": -1, "kind": "", "lost_percent": float("nan")}
    return {"kind": kind, "run": run, "truth_percent": truth, "lost_percent": report["lost_percent"],
            "first_rank": first["rank"], "first_kind": first["kind"], "first_lost_percent": first["lost_percent"],
            "slow_ranks": len(slow), "episodes": len(episodes),
            "best_iou": max((iou((e["start_s"], e["end_s"]), WINDOW) for e in episodes), default=0.0),
            "io_share": lost.get("io", 0.0) / lost_total if lost_total > 0 else float("nan"),
            "run_time_s": report["run_time_s"], "load_1min": os.getloadavg()[0]}


def summarize(rows):
    lines = ["| kind | runs | median truth % | rank 1 named first | median abs(charge - truth) pp | "
             "max abs(charge - truth) pp | kind `slow` | runs with a slow rank | runs with an episode | "
             "median best IoU | min best IoU | median I/O share of lost | min I/O share |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind in dict.fromkeys(r["kind"] for r in rows):
        mine = [r for r in rows if r["kind"] == kind]
        n = len(mine)
        first = sum(r["first_rank"] == 1 for r in mine)
        errors = np.array([abs(r["first_lost_percent"] - r["truth_percent"]) for r in mine if r["first_rank"] == 1])
        slow_kind = sum(r["first_kind"] == "slow" for r in mine if r["first_rank"] == 1)
        ious = np.array([r["best_iou"] for r in mine])
        shares = np.array([r["io_share"] for r in mine if r["io_share"] == r["io_share"]])
        slow_kinds = kind.startswith("slow_rank")
        lines.append(
            f"| {kind} | {n} | {np.median([r['truth_percent'] for r in mine]):.2f} | "
            f"{f'{first}/{n}' if slow_kinds else '–'} | "
            f"{f'{np.median(errors):.2f}' if slow_kinds and len(errors) else '–'} | "
            f"{f'{errors.max():.2f}' if slow_kinds and len(errors) else '–'} | "
            f"{f'{slow_kind}/{first}' if slow_kinds else '–'} | "
            f"{sum(r['slow_ranks'] > 0 for r in mine)}/{n} | {sum(r['episodes'] > 0 for r in mine)}/{n} | "
            f"{f'{np.median(ious):.2f}' if kind == 'window' else '–'} | "
            f"{f'{ious.min():.2f}' if kind == 'window' else '–'} | "
            f"{f'{np.median(shares):.2f}' if kind == 'io_only' and len(shares) else '–'} | "
            f"{f'{shares.min():.2f}' if kind == 'io_only' and len(shares) else '–'} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="an MPICH build directory (scripts/build.sh mpich)")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--output", default="diagnosis-campaign")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {list(KINDS)}")
    demo = os.path.join(build, "test", "integration", "bsp_demo")
    units = subprocess.run([demo, "-P"], capture_output=True, text=True, check=True).stdout.split()[-1]
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tremor-diagnosis-")
    rows = []
    try:
        for run in range(args.runs):  # kinds interleaved, so a drift of the machine's load hits them alike
            for kind in kinds:
                row = run_once(build, kind, run, units, work)
                rows.append(row)
                print(f"{kind:11s} run {run}: truth {row['truth_percent']:6.2f} %  lost {row['lost_percent']:6.2f} %  "
                      f"first rank {row['first_rank']} ({row['first_kind']}, {row['first_lost_percent']:.2f} %)  "
                      f"episodes {row['episodes']} (IoU {row['best_iou']:.2f})  I/O share {row['io_share']:.2f}",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    common.write_csv(os.path.join(args.output, "runs.csv"), rows, COLUMNS)
    summary = summarize(rows)
    with open(os.path.join(args.output, "summary.md"), "w") as handle:
        handle.write(summary)
    print(summary)


if __name__ == "__main__":
    main()
