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
  clean_long       no injection; 60 iterations of 20 or 40 ms (longer than the
                   scheduler's time slice, so a competing process hits every one)
  contended        no injection: clean_long's program beside another job's process
                   (a busy loop, not an MPI rank) for the whole run
  contended_window clean's program beside the same busy loop from 30 % of the
                   clean run time, for 35 % of it

The contended kinds are real interference, not planted: their truth is the
wall clock (the run's excess over the clean runs' median), so they check
that runs the wall clock shows slower than their siblings read that
difference.

Truth: the injected critical path from the injector's own logs
(injected_truth.py; the collectives are traced, TREMOR_INJECT_TRACE=coll), as
% of the run time: per segment a delay in the closing collective counts only
beyond the last other rank's arrival there (a rank that waited anyway lost its
sleep to that wait), other delays count in full, the largest rank's sum. Column
largest_delay_percent is the simpler upper bound: per segment the largest sum
of one rank's delays. Delays outside the recorded segments (segment -1:
Tremor's own start-up I/O) are not the application's and are left out. The wall clock is reported too:
each run's excess over the median run time of the same program without
injection (clean, checkpoint, io_clean), when that kind was run.

Two columns bound what any estimator could score against these truths. A
wall-clock truth takes the clean runs' median as each run's own clean time;
"exact estimate's accuracy" is the accuracy an estimate exact for the run
would score if its clean time had been that of another clean run (median and
10 % quantile over run and clean-run pairs). An injected truth leaves out the
machine's own interference; run_queue_percent is the kernel's count of it
(schedstat run delay, summed over ranks, % of the run). machine_low_percent
and machine_high_percent bound the same count on the critical path, from the
injector's logs (every kind runs with the injector tracing the collectives;
injected_truth.machine_path): the truth of the machine's own interference.
The last column scores the estimate against the injected truth plus its high
bound (for the contended kinds: the bound alone, the busy loop's share of the
CPUs; not where the ranks take turns on the CPUs: their run queue is the
job's own).
intrinsic_vs_clean_percent compares the run's intrinsic run time (what it
would have taken without the interference found) with the clean runs'
median run time. machine_percent is what the machine took from the ranks
while they ran, measured by the campaign itself (machine_load.py: the kernel's
run-queue delay of the ranks' threads plus steal, % of the run; a run
whose count is incomplete stops the campaign), the independent measure
check_campaign.py widens its bands by.

usage: kinds_campaign.py --build BUILD_DIR [--kinds k1,k2] [--runs N] [--seed S] [--output DIR] [--plot]
       [--workload NAME=COMMAND --flavour mpich|openmpi --np N [--launcher CMD]]
With --workload, a real application replaces the demo (see
validation/campaigns/README.md, "Real applications from Debian"); kinds that
change the demo's arguments are skipped, windows are placed at 30-65 % of its
first clean run, delays scale with that run's mean segment time (APP_DELAYS),
and the wall-clock reference is its clean runs.
Writes DIR/runs.csv and DIR/summary.md (median |estimate − truth| per kind and
method) and prints the summary.
"""
import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
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
LONG = ["-n", "60", "-u", "20000", "-k", "0"]
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
    # Real interference: another process competing for the cores (CONTENDED).
    "clean_long": ({}, LONG),
    "contended": ({}, LONG),
    "contended_window": ({}, BASE),
}
# Kinds run beside a busy loop: (start, length) as shares of the clean run
# time (length None: to the end). Their truth is the wall clock.
CONTENDED = {"contended": (0.0, None), "contended_window": (0.30, 0.35)}
COLUMNS = ["workload", "kind", "run", "truth_percent", "wall_percent", "primary_percent", "primary_ci_low", "primary_ci_high",
           "mad4_percent", "run_time_s", "intrinsic_run_time_s", "class", "truth_class", "lost_compute_percent",
           "lost_mpi_percent", "lost_io_percent", "largest_delay_percent", "run_queue_percent",
           "machine_low_percent", "machine_high_percent", "intrinsic_vs_clean_percent", "machine_percent", "taking_turns", "date"]


def reference_times(rows, row):
    """Run times of the same program without injection, in the same campaign."""
    arguments = KINDS[row["kind"]][1]
    demo = row["workload"] == "bsp_demo"
    references = [k for k, (s, a) in KINDS.items()
                  if not s and k not in CONTENDED and (a == arguments or not demo)]
    return [r["run_time_s"] for r in rows if r["kind"] in references and r["workload"] == row["workload"]]


def exact_estimate_accuracies(rows, row, scoring):
    """A wall-clock truth takes the clean runs' median as this run's own clean
    time, but clean runs differ among themselves. If this run's clean time had
    been that of clean run j, an estimate exact for the run would read the
    truth less (T_j - median) / T and score this accuracy against the truth:
    one value per clean run: the ceiling the reference's spread sets on any
    estimator."""
    times = reference_times(rows, row)
    if row["kind"] not in CONTENDED or not times:
        return []
    median = float(np.median(times))
    truth = row["truth_percent"]
    return [scoring.accuracy(truth, truth - 100.0 * (time - median) / row["run_time_s"]) for time in times]


def add_wall_clock(rows):
    """wall_percent: the run's excess over the median run time of the same
    program without injection (run in the same campaign), in % of the run.
    The demo does a fixed amount of work, so this is the time the injection
    cost, side effects included (a cold cache after a sleep, a slower flush);
    it also holds the machine's own variation between runs."""
    for row in rows:
        times = reference_times(rows, row)
        clean_s = float(np.median(times)) if times else None
        row["wall_percent"] = 100.0 * (row["run_time_s"] - clean_s) / row["run_time_s"] if times else ""
        # What the run would have taken without the interference found,
        # against what the same program took alone.
        row["intrinsic_vs_clean_percent"] = 100.0 * (row["intrinsic_run_time_s"] / clean_s - 1.0) if times else ""
        if row["kind"] in CONTENDED:  # nothing planted: what the wall clock lost is the truth
            row["truth_percent"] = row["wall_percent"] if times else float("nan")


# Kinds that change the demo's own arguments run only on the demo.
DEMO_ONLY = {"checkpoint", "io_clean", "clean_long"}
# Windows on a real application cover the same share of its run as on the
# demo: from 30 % of its clean run time, for 35 % of it.
WINDOW_START, WINDOW_LENGTH = 0.30, 0.35


# On a real application the delays scale with its mean segment time (from
# its first clean run), so each kind weighs on its run as on the demo's:
# (mean delay, sd) in mean segment times, and the probability where it differs.
APP_DELAYS = {"sparse": (2.0, 0.5, "0.05"), "most_p0.5": (0.3, 0.1, None), "most_p0.9": (0.3, 0.1, None),
              "window": (0.5, 0.1, None)}


def injection_settings(kind, clean):
    """clean: None, or the first clean run's {"time_s", "segment_s"} (real applications only)."""
    settings = dict(KINDS[kind][0])
    if clean and kind == "window":
        settings["TREMOR_INJECT_AFTER_S"] = f"{WINDOW_START * clean['time_s']:.3f}"
        settings["TREMOR_INJECT_FOR_S"] = f"{WINDOW_LENGTH * clean['time_s']:.3f}"
    if clean and kind in APP_DELAYS:
        mean, sd, probability = APP_DELAYS[kind]
        settings["TREMOR_INJECT_MEAN_US"] = str(max(1, round(mean * clean["segment_s"] * 1e6)))
        settings["TREMOR_INJECT_SD_US"] = str(max(0, round(sd * clean["segment_s"] * 1e6)))
        if probability:
            settings["TREMOR_INJECT_PROBABILITY"] = probability
    return settings


@contextlib.contextmanager
def competing_load(kind, clean_time_s):
    """For the CONTENDED kinds: one busy-loop process (another job sharing the
    node) placed by the first clean run's time; nothing for the other kinds."""
    if kind not in CONTENDED:
        yield
        return
    start, length = CONTENDED[kind]
    clean = clean_time_s or 1.0
    loop = "while :; do :; done"
    if length is not None:
        loop = f"sleep {start * clean:.3f}; exec timeout {length * clean:.3f} sh -c '{loop}'"
    process = subprocess.Popen(["sh", "-c", loop], start_new_session=True)
    try:
        yield
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run_once(setup, kind, run, work):
    """One run of `kind` on setup's workload; returns its row."""
    out = os.path.join(work, f"{setup['name']}-{kind}-{run}")
    settings = injection_settings(kind, setup.get("clean"))
    env = {k: "" for k in os.environ if k.startswith("TREMOR_")}
    env.update(settings)
    # Every kind runs with the injector tracing the collectives: its logs hold
    # the planted delays and the run-queue delays the machine caused.
    preload = setup["profiler"] + " " + setup["injector"]
    env.update(injected_truth.TRACE_SETTINGS)
    if settings:
        env["TREMOR_INJECT_SEED"] = str(setup["seed"] + run)
    if setup["command"] is None:  # the demo, with the kind's own arguments
        command = [setup["demo"], *KINDS[kind][1], "-c", setup["units"], "-q", "-O", out]
    else:
        command = setup["command"]
    with competing_load(kind, setup.get("clean_time_s")):
        _, path, _ = common.run_under_launcher(setup["launcher"], setup["np"], preload, command, env, out, 900)
    return analysed_row(setup, kind, run, path)


def run_file_date(path):
    """The UTC date in a run file's name (<program>-YYYYMMDD-HHMMSS-...), as YYYY-MM-DD; '' without one."""
    found = re.search(r"-(\d{4})(\d{2})(\d{2})-\d{6}-", os.path.basename(path))
    return "-".join(found.groups()) if found else ""


def analysed_row(setup, kind, run, path):
    """The row of one run file: its truth and `tremor analyze`'s figures. The first
    report's class limits and logistic score the campaign (setup["scoring"])."""
    with h5py.File(path, "r") as h5:
        critical_s, largest_s = injected_truth.critical_path(h5)
        truth = 100.0 * critical_s / float(h5.attrs["run_time_s"])
        largest_delay = 100.0 * largest_s / float(h5.attrs["run_time_s"])
        # The kernel's count of time the ranks were runnable but not running
        # (schedstat), summed over ranks: the machine's own CPU-side
        # interference, which the injected truth leaves out.
        queued = h5["/ranks/run_queue_delay_s"][:] if "/ranks/run_queue_delay_s" in h5 else None
        run_queue = 100.0 * float(queued.sum()) / float(h5.attrs["run_time_s"]) if queued is not None else ""
        # The same count on the critical path, its bounds, from the injector's logs.
        machine_s = injected_truth.machine_path(h5)
        machine_low, machine_high = ([100.0 * m / float(h5.attrs["run_time_s"]) for m in machine_s]
                                     if machine_s is not None else ("", ""))
    report = json.loads(subprocess.run([setup["tremor"], "analyze", "--json", path], capture_output=True, text=True,
                                       check=True).stdout)
    low, high = report["lost_percent_ci"]
    scoring = setup.setdefault("scoring", common.Scoring.of_report(report))
    lost_parts = ((report.get("diagnosis") or {}).get("components") or {}).get("lost") or {}
    return {"lost_compute_percent": lost_parts.get("compute", ""), "lost_mpi_percent": lost_parts.get("mpi", ""),
            "lost_io_percent": lost_parts.get("io", ""),
            "workload": setup["name"], "kind": kind, "run": run, "truth_percent": truth,
            "largest_delay_percent": largest_delay, "run_queue_percent": run_queue,
            "machine_low_percent": machine_low, "machine_high_percent": machine_high,
            "taking_turns": bool((report.get("primary") or {}).get("taking_turns")),
            "date": run_file_date(path),
            "segments": report["segments"],
            "primary_percent": report["lost_percent"], "primary_ci_low": low, "primary_ci_high": high,
            "mad4_percent": report["paper_mad4_percent"], "run_time_s": report["run_time_s"],
            "intrinsic_run_time_s": report["intrinsic_run_time_s"], "class": report["class"],
            "truth_class": scoring.interference_class(truth),
            "machine_percent": common.read_machine_load(os.path.dirname(path), report["run_time_s"])}


def median_text(values):
    values = [v for v in values if v != ""]
    return f"{np.median(np.array(values, dtype=float)):.2f}" if values else "-"


def intrinsic_text(mine):
    """The intrinsic run time's signed median deviation from the clean runs'
    median time, and its largest deviation, in %."""
    values = np.array([r["intrinsic_vs_clean_percent"] for r in mine if r["intrinsic_vs_clean_percent"] != ""],
                      dtype=float)
    if values.size == 0:
        return "-"
    return f"{np.median(values):+.2f} / {values[np.argmax(abs(values))]:+.2f}"


def with_machine_truth(row, bound="high"):
    """The truth with the machine's own interference: the injected critical
    path plus a bound of the machine's (injector logs); for the contended
    kinds, which plant nothing, the machine's alone. None where not logged, or
    where the ranks take turns on the CPUs (their run queue is the job's own)."""
    value = row.get(f"machine_{bound}_percent")
    if value in ("", None) or row.get("taking_turns"):
        return None
    planted = 0.0 if row["kind"] in CONTENDED else float(row["truth_percent"])
    return planted + float(value)


def with_machine_text(mine, scoring):
    """Accuracy against the truth with the machine's own (with_machine_truth)."""
    pairs = [(with_machine_truth(r), r["primary_percent"]) for r in mine if with_machine_truth(r) is not None]
    if not pairs:
        return "-"
    accuracy = [scoring.accuracy(t, p) for t, p in pairs]
    return f"{np.median(accuracy):.3f} / {min(accuracy):.3f}"


def ceiling_text(rows, mine, scoring):
    """Median and 10 % quantile over (run, clean run) pairs of
    exact_estimate_accuracies; '-' where the truth is injected."""
    if mine[0]["kind"] not in CONTENDED:
        return "-"
    values = [a for row in mine for a in exact_estimate_accuracies(rows, row, scoring)]
    if not values:
        return "-"
    return f"{np.median(values):.3f} / {np.quantile(values, 0.1):.3f}"


def summarize(rows, scoring):
    lines = ["| workload | kind | runs | median truth % | median wall-clock % | median primary % | "
             "median abs(primary - truth) pp | median abs(primary - wall) pp | "
             "median 4·MAD % | median abs(4·MAD - truth) pp | median accuracy (primary) | min accuracy (primary) | "
             "exact estimate's accuracy (median / 10 %) | median run queue % | "
             "accuracy against truth + machine's own (median / min) | intrinsic time against clean, % (median / largest) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for workload, kind in dict.fromkeys((r["workload"], r["kind"]) for r in rows):
        mine = [r for r in rows if r["kind"] == kind and r["workload"] == workload]
        truth = np.array([r["truth_percent"] for r in mine])
        primary = np.array([r["primary_percent"] for r in mine])
        mad4 = np.array([r["mad4_percent"] for r in mine])
        walls = [r["wall_percent"] for r in mine if r["wall_percent"] != ""]
        wall = np.array(walls, dtype=float)
        wall_primary = np.array([r["primary_percent"] for r in mine if r["wall_percent"] != ""])
        wall_text = f"{np.median(wall):.2f}" if walls else "-"
        wall_error = f"{np.median(abs(wall_primary - wall)):.2f}" if walls else "-"
        accuracy = np.array([scoring.accuracy(t, p) for t, p in zip(truth, primary)])
        lines.append(f"| {workload} | {kind} | {len(mine)} | {np.median(truth):.2f} | {wall_text} | {np.median(primary):.2f} | "
                     f"{np.median(abs(primary - truth)):.2f} | {wall_error} | {np.median(mad4):.2f} | "
                     f"{np.median(abs(mad4 - truth)):.2f} | {np.median(accuracy):.3f} | {accuracy.min():.3f} | "
                     f"{ceiling_text(rows, mine, scoring)} | {median_text(r['run_queue_percent'] for r in mine)} | "
                     f"{with_machine_text(mine, scoring)} | {intrinsic_text(mine)} |")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """Per workload and kind: median truth, wall clock, primary and 4·MAD, with each run's primary as dots."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = list(dict.fromkeys((r["workload"], r["kind"]) for r in rows))
    figure, axes = plt.subplots(figsize=(max(6.0, 0.9 * len(keys) + 2.0), 4.2))
    series = [("truth_percent", "truth (injected; wall clock for contended)", "#444444"), ("wall_percent", "wall clock", "#999999"),
              ("primary_percent", "primary estimate", "#1f77b4"), ("mad4_percent", "paper's 4·MAD", "#ff7f0e")]
    width = 0.2
    for i, (column, label, colour) in enumerate(series):
        heights = []
        for workload, kind in keys:
            values = [float(r[column]) for r in rows if (r["workload"], r["kind"]) == (workload, kind)
                      and r[column] != ""]
            heights.append(float(np.median(values)) if values else 0.0)
        positions = np.arange(len(keys)) + (i - 1.5) * width
        axes.bar(positions, heights, width, label=label, color=colour)
        if column == "primary_percent":
            for j, key in enumerate(keys):
                dots = [float(r[column]) for r in rows if (r["workload"], r["kind"]) == key]
                axes.plot([positions[j]] * len(dots), dots, ".", color="black", markersize=3)
    axes.set_xticks(np.arange(len(keys)))
    axes.set_xticklabels([f"{w}\n{k}" for w, k in keys], fontsize=7)
    axes.set_ylabel("% of the run lost")
    axes.legend(fontsize=7)
    axes.set_title("Lost time by kind of interference: truth, wall clock, primary estimate, 4·MAD", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="a build directory (scripts/build.sh mpich|openmpi)")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", default="kinds-campaign")
    parser.add_argument("--workload", help="NAME=COMMAND: a real application instead of the bundled demo "
                        "(its demo-only kinds are skipped)")
    parser.add_argument("--launcher", default=None, help="default: mpiexec.mpich (mpirun.openmpi ... for openmpi)")
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--flavour", choices=("mpich", "openmpi"), default="mpich")
    parser.add_argument("--plot", action="store_true", help="also write kinds.png")
    parser.add_argument("--seed", type=int, default=11, help="the injector's seed of run 0 (run i: seed + i); "
                        "a held-out campaign takes seeds no tuning campaign used")
    parser.add_argument("--keep", metavar="DIR", help="keep every run's files in DIR (for re-scoring)")
    parser.add_argument("--reanalyse", metavar="DIR", help="run nothing: analyse the run files a campaign kept "
                        "with --keep DIR again with this build's tremor (same kinds, runs and workload options)")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {list(KINDS)}")
    launcher = args.launcher or ("mpiexec.mpich" if args.flavour == "mpich" else
                                 "mpirun.openmpi --oversubscribe --allow-run-as-root --bind-to none")
    setup = {"launcher": launcher, "np": args.np, "seed": args.seed, "tremor": os.path.join(build, "estimators", "tremor"),
             "profiler": os.path.join(build, "interpose", f"libtremor-{args.flavour}.so"),
             "injector": os.path.join(build, "injector", f"libtremor-inject-{args.flavour}.so")}
    if args.workload:
        name, _, command = args.workload.partition("=")
        setup.update(name=name, command=shlex.split(command))
        kinds = [k for k in kinds if k not in DEMO_ONLY]
    else:
        demo = os.path.join(build, "test", "integration", "bsp_demo")
        units = subprocess.run([demo, "-P"], capture_output=True, text=True, check=True).stdout.split()[-1]
        setup.update(name="bsp_demo", command=None, demo=demo, units=units)
    if "clean" in kinds:  # first in every round: its run time places the windows
        kinds = ["clean"] + [k for k in kinds if k != "clean"]
    os.makedirs(args.output, exist_ok=True)
    if args.reanalyse:
        rows = reanalysed_rows(setup, kinds, args.runs, args.reanalyse)
        finish(rows, args, setup["scoring"])
        return
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="tremor-kinds-")
    os.makedirs(work, exist_ok=True)
    rows = []
    try:
        for run in range(args.runs):  # kinds interleaved, so a drift of the machine's load hits them alike
            for kind in kinds:
                row = run_once(setup, kind, run, work)
                rows.append(row)
                if kind == "clean" and "clean_time_s" not in setup:
                    setup["clean_time_s"] = row["run_time_s"]
                if kind == "clean" and "clean" not in setup and setup["command"] is not None:
                    setup["clean"] = {"time_s": row["run_time_s"],
                                      "segment_s": row["run_time_s"] / max(1, row["segments"])}
                print(f"{setup['name']} {kind:11s} run {run}: truth {row['truth_percent']:6.2f} %  primary "
                      f"{row['primary_percent']:6.2f} % [{row['primary_ci_low']:.2f}, {row['primary_ci_high']:.2f}]  "
                      f"4·MAD {row['mad4_percent']:6.2f} %  run {row['run_time_s']:.3f} s", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    finish(rows, args, setup["scoring"])


def reanalysed_rows(setup, kinds, runs, kept):
    """Rows of the run files a campaign kept, analysed again, in the campaign's order."""
    rows = []
    for run in range(runs):
        for kind in kinds:
            folder = os.path.join(kept, f"{setup['name']}-{kind}-{run}")
            files = sorted(f for f in os.listdir(folder) if f.endswith(".h5")) if os.path.isdir(folder) else []
            if not files:
                sys.exit(f"{folder}: no run file kept")
            rows.append(analysed_row(setup, kind, run, os.path.join(folder, files[0])))
    return rows


def finish(rows, args, scoring):
    """Wall clock, runs.csv, summary.md (printed) and the plot."""
    add_wall_clock(rows)
    common.write_csv(os.path.join(args.output, "runs.csv"), rows, COLUMNS)
    summary = summarize(rows, scoring)
    with open(os.path.join(args.output, "summary.md"), "w") as handle:
        handle.write(summary)
    if args.plot:
        plot(rows, os.path.join(args.output, "kinds.png"))
    print(summary)


if __name__ == "__main__":
    main()
