#!/usr/bin/python3
"""Kinds campaign: the primary estimate and the paper's 4·MAD figure against
injected truth, one row per run, for each kind of interference.

Workload: the bundled bulk-synchronous demo (bsp_demo) on 2 MPICH processes,
with a fixed number of compute units per microsecond (-c) so every run does
the same work. Kinds:

  clean            no injection
  checkpoint       no injection; the demo rewrites a 4 MiB checkpoint in place
                   every 50 iterations (the application's own recurring slowdown)
  sparse           rank 1, 2 % of its collectives delayed by 20 ± 5 ms
  most_p0.5/0.9    rank 1, 50 % / 90 % of its collectives delayed by 1 ± 0.3 ms
  window           every rank, 80 % of collectives delayed by 1.5 ± 0.3 ms
                   between 0.4 s and 0.9 s after MPI_Init
  slow_rank        rank 1 runs 20 % slower (TREMOR_INJECT_SLOWDOWN=0.2)
  io_only          rank 1, a third of its checkpoint writes delayed by 15 ± 5 ms
  io_clean         io_only's program without injection (its wall-clock reference)

Truth: the injected critical path from the run file: the delays of each rank
summed per segment (/injection/segment, the profiler's own segment of each
delay), the maximum over ranks per segment, summed, as % of the run time.
Delays outside the recorded segments (segment -1: Tremor's own start-up I/O)
are not the application's and are left out. The wall clock is reported too:
each run's excess over the median run time of the same program without
injection (clean, checkpoint, io_clean), when that kind was run.

usage: kinds_campaign.py --build BUILD_DIR [--kinds k1,k2] [--runs N] [--output DIR]
Writes DIR/runs.csv and DIR/summary.md (median |estimate − truth| per kind and
method) and prints the summary.
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

BASE = ["-n", "400", "-u", "2000", "-k", "0"]
COLL_RANK1 = {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_RANKS": "1"}
KINDS = {
    "clean": ({}, BASE),
    "checkpoint": ({}, ["-n", "400", "-u", "2000", "-k", "50", "-z", "4194304"]),
    "sparse": ({**COLL_RANK1, "TREMOR_INJECT_PROBABILITY": "0.02", "TREMOR_INJECT_MEAN_US": "20000",
                "TREMOR_INJECT_SD_US": "5000"}, BASE),
    "most_p0.5": ({**COLL_RANK1, "TREMOR_INJECT_PROBABILITY": "0.5", "TREMOR_INJECT_MEAN_US": "1000",
                   "TREMOR_INJECT_SD_US": "300"}, BASE),
    "most_p0.9": ({**COLL_RANK1, "TREMOR_INJECT_PROBABILITY": "0.9", "TREMOR_INJECT_MEAN_US": "1000",
                   "TREMOR_INJECT_SD_US": "300"}, BASE),
    "window": ({"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.8", "TREMOR_INJECT_AFTER_S": "0.4",
                "TREMOR_INJECT_FOR_S": "0.5", "TREMOR_INJECT_MEAN_US": "1500", "TREMOR_INJECT_SD_US": "300"}, BASE),
    "slow_rank": ({**COLL_RANK1, "TREMOR_INJECT_CALLS": "p2p,coll", "TREMOR_INJECT_SLOWDOWN": "0.2"}, BASE),
    "io_only": ({"TREMOR_INJECT_CALLS": "posix", "TREMOR_INJECT_RANKS": "1", "TREMOR_INJECT_PROBABILITY": "0.33",
                 "TREMOR_INJECT_MEAN_US": "15000", "TREMOR_INJECT_SD_US": "5000"},
                ["-n", "400", "-u", "2000", "-k", "10"]),
    # io_only's program without injection: its wall-clock reference.
    "io_clean": ({}, ["-n", "400", "-u", "2000", "-k", "10"]),
}
COLUMNS = ["kind", "run", "truth_percent", "wall_percent", "primary_percent", "primary_ci_low", "primary_ci_high",
           "mad4_percent", "run_time_s", "intrinsic_run_time_s", "class", "truth_class"]


def add_wall_clock(rows):
    """wall_percent: the run's excess over the median run time of the same
    program without injection (run in the same campaign), in % of the run.
    The demo does a fixed amount of work, so this is the time the injection
    cost, side effects included (a cold cache after a sleep, a slower flush);
    it also holds the machine's own variation between runs."""
    for row in rows:
        settings, arguments = KINDS[row["kind"]]
        references = [k for k, (s, a) in KINDS.items() if not s and a == arguments]
        times = [r["run_time_s"] for r in rows if r["kind"] in references]
        row["wall_percent"] = (100.0 * (row["run_time_s"] - float(np.median(times))) / row["run_time_s"]
                               if times else "")


def injected_percent(h5):
    if "injection" not in h5 or h5["injection/rank"].shape[0] == 0:
        return 0.0
    tags = h5["injection/segment"][:]
    ranks = h5["injection/rank"][:]
    spent = h5["injection/spent_us"][:] * 1e-6
    per_segment = {}
    for segment, rank, delay in zip(tags, ranks, spent):
        if segment < 0:
            continue
        ranks_of = per_segment.setdefault(int(segment), {})
        ranks_of[int(rank)] = ranks_of.get(int(rank), 0.0) + float(delay)
    critical = sum(max(v.values()) for v in per_segment.values())
    return 100.0 * critical / float(h5.attrs["run_time_s"])


def run_once(build, kind, run, units, work):
    settings, arguments = KINDS[kind]
    out = os.path.join(work, f"{kind}-{run}")
    os.makedirs(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_")}
    env.update(TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none", **settings)
    preload = [os.path.join(build, "interpose", "libtremor-mpich.so")]
    if settings:
        env["TREMOR_INJECT_SEED"] = str(11 + run)
        preload.append(os.path.join(build, "injector", "libtremor-inject-mpich.so"))
    env["LD_PRELOAD"] = " ".join(preload)
    demo = os.path.join(build, "test", "integration", "bsp_demo")
    subprocess.run(["mpiexec.mpich", "-n", "2", demo, *arguments, "-c", units, "-q", "-O", out], env=env,
                   check=True, capture_output=True, timeout=600)
    path = glob.glob(os.path.join(out, "*.h5"))[0]
    with h5py.File(path, "r") as h5:
        truth = injected_percent(h5)
    tremor = os.path.join(build, "estimators", "tremor")
    report = json.loads(subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True,
                                       check=True).stdout)
    low, high = report["lost_percent_ci"]
    return {"kind": kind, "run": run, "truth_percent": truth, "primary_percent": report["lost_percent"],
            "primary_ci_low": low, "primary_ci_high": high, "mad4_percent": report["paper_mad4_percent"],
            "run_time_s": report["run_time_s"], "intrinsic_run_time_s": report["intrinsic_run_time_s"],
            "class": report["class"], "truth_class": common.interference_class(truth)}


def summarize(rows):
    lines = ["| kind | runs | median truth % | median wall-clock % | median primary % | "
             "median abs(primary - truth) pp | median abs(primary - wall) pp | "
             "median 4·MAD % | median abs(4·MAD - truth) pp | median accuracy (primary) | min accuracy (primary) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind in dict.fromkeys(r["kind"] for r in rows):
        mine = [r for r in rows if r["kind"] == kind]
        truth = np.array([r["truth_percent"] for r in mine])
        primary = np.array([r["primary_percent"] for r in mine])
        mad4 = np.array([r["mad4_percent"] for r in mine])
        walls = [r["wall_percent"] for r in mine if r["wall_percent"] != ""]
        wall = np.array(walls, dtype=float)
        wall_primary = np.array([r["primary_percent"] for r in mine if r["wall_percent"] != ""])
        wall_text = f"{np.median(wall):.2f}" if walls else "-"
        wall_error = f"{np.median(abs(wall_primary - wall)):.2f}" if walls else "-"
        accuracy = np.array([1.0 - abs(common.probability_high(t) - common.probability_high(p))
                             for t, p in zip(truth, primary)])
        lines.append(f"| {kind} | {len(mine)} | {np.median(truth):.2f} | {wall_text} | {np.median(primary):.2f} | "
                     f"{np.median(abs(primary - truth)):.2f} | {wall_error} | {np.median(mad4):.2f} | "
                     f"{np.median(abs(mad4 - truth)):.2f} | {np.median(accuracy):.3f} | {accuracy.min():.3f} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="an MPICH build directory (scripts/build.sh mpich)")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", default="kinds-campaign")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {list(KINDS)}")
    demo = os.path.join(build, "test", "integration", "bsp_demo")
    units = subprocess.run([demo, "-P"], capture_output=True, text=True, check=True).stdout.split()[-1]
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tremor-kinds-")
    rows = []
    try:
        for run in range(args.runs):  # kinds interleaved, so a drift of the machine's load hits them alike
            for kind in kinds:
                row = run_once(build, kind, run, units, work)
                rows.append(row)
                print(f"{kind:11s} run {run}: truth {row['truth_percent']:6.2f} %  primary "
                      f"{row['primary_percent']:6.2f} % [{row['primary_ci_low']:.2f}, {row['primary_ci_high']:.2f}]  "
                      f"4·MAD {row['mad4_percent']:6.2f} %  run {row['run_time_s']:.3f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    add_wall_clock(rows)
    common.write_csv(os.path.join(args.output, "runs.csv"), rows, COLUMNS)
    summary = summarize(rows)
    with open(os.path.join(args.output, "summary.md"), "w") as handle:
        handle.write(summary)
    print(summary)


if __name__ == "__main__":
    main()
