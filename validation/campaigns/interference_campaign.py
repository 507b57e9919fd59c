#!/usr/bin/python3
"""Interference campaign: Tremor's single-run estimate against measured truth.

For each workload (an MPI command) the campaign runs it N times with Tremor
and libtremor-inject preloaded, at injected interference levels from none to
well past 15 % of the run time, in a shuffled order (seed recorded) that
alternates low and high levels so a drift of the shared machine's load does
not line up with the level. Per run it records:

- run time: `run_time_s` of the run file (MPI_Init exit to MPI_Finalize
  entry, max over ranks; launcher start-up is excluded, it is noise here) and
  the launcher's wall time;
- measured interference = (T − T_fastest − D) / T, where T_fastest is the
  fastest run of the workload and D the *median displacement*:
  T_fastest · max(0, median over segments of (duration / duration of the same
  segment in the fastest run) − 1), at most T − T_fastest. A slowdown that
  stretches every segment (continuous interference, e.g. a busier machine)
  moves that median, sporadic delays on fewer than half of the segments do
  not; Tremor reports the continuous part separately, so it is removed here to
  compare like with like. A ratio times T_fastest rather than a sum of
  per-segment differences, because segment durations are maxima over ranks
  and their sum exceeds the run time by the ranks' exit skew, which varies
  from run to run. The raw (T − T_fastest)/T is kept too;
- injected critical path, from the injector's own logs (injected_truth.py;
  the collectives are traced, TREMOR_INJECT_TRACE=coll): per segment, a delay
  in the closing collective counts only beyond the last other rank's arrival
  there (the ranks' logged entries into it), a delay in any other call in
  full, the most delayed rank's sum.
  `injected_largest_percent` is the upper bound that counts every delay of
  the most delayed rank per segment;
- estimated interference: `interference_percent` of the run's own JSON report;
- p = Tremor's logistic p(high) of measured and estimated (its slope and
  centre, and the class limits, from the reports' `classification`),
  accuracy = 1 − |p_measured − p_estimated|, |Δ pp| = |measured − estimated|
  in percentage points, and whether both fall in the same class; the same
  accuracy against the injected critical path is kept as a second view
  (`accuracy_vs_injected`), free of run-to-run noise of the machine.

Outputs in --output: runs.csv (every run, raw figures), summary.csv and
summary.md (per workload), estimated_vs_measured.png, accuracy_boxplot.png,
campaign.json (arguments, seed, order, injection settings per level).

Injection per level L (% of the injected run's time): one calibration run per
workload with probability 1 and a 1 µs mean counts the eligible calls on the
injected ranks; then probability = T0·L/(100 − L) / (calls · mean delay).
"""
import argparse
import json
import os
import random
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign_common as common

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

import injected_truth  # noqa: E402

RUN_COLUMNS = ["workload", "order", "run", "level_percent", "inject_calls", "inject_ranks", "inject_probability",
               "inject_mean_us", "inject_sd_us", "inject_seed", "wall_s", "run_time_s", "fastest_run_time_s",
               "raw_measured_percent", "median_displacement_s", "measured_percent", "injected_delays",
               "injected_rank_max_s", "injected_critical_path_s", "injected_percent", "injected_largest_percent", "injected_assessed_percent", "estimated_percent", "paper_mad4_percent",
               "intrinsic_run_time_s",
               "estimated_continuous_percent", "estimate_class", "measured_class", "p_measured", "p_estimated",
               "accuracy", "abs_delta_pp", "same_class", "p_injected", "accuracy_vs_injected", "segments", "usable_segments",
               "usable_time_percent", "boundary_rate_hz", "counter_source",
               "h5_file", "machine_percent"]
SUMMARY_COLUMNS = ["workload", "runs", "median_accuracy", "min_accuracy", "median_abs_delta_pp",
                   "max_abs_delta_pp", "class_agreement", "median_injected_vs_estimated_abs_pp",
                   "median_accuracy_vs_injected", "min_accuracy_vs_injected"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher", required=True, help="launcher words, e.g. 'mpiexec.mpich'")
    parser.add_argument("--np", type=int, default=2, help="processes per run")
    parser.add_argument("--profiler", required=True, help="libtremor-<flavour>.so")
    parser.add_argument("--injector", required=True, help="libtremor-inject-<flavour>.so")
    parser.add_argument("--workload", action="append", required=True, metavar="NAME[:CALLS]=COMMAND",
                        help="workload name, optional injected call families (default coll), command")
    parser.add_argument("--runs", type=int, default=15, help="runs per workload (15 or more for a campaign)")
    parser.add_argument("--levels", default="0,2,5,8,11,14,18,25,35",
                        help="injected interference levels, percent of the run time")
    parser.add_argument("--inject-ranks", default="1", help="TREMOR_INJECT_RANKS")
    parser.add_argument("--delay-us", type=float, default=None,
                        help="mean injected delay, µs (default: --delay-calls × the calibration run's time per "
                             "eligible call)")
    parser.add_argument("--delay-calls", type=float, default=6.0,
                        help="default delay in units of time per eligible call: large enough to stand out of the "
                             "segment noise of a shared machine, small enough that each level needs many delays")
    parser.add_argument("--delay-sd-fraction", type=float, default=0.25, help="delay SD as a fraction of the mean")
    parser.add_argument("--seed", type=int, default=None, help="seed of the order and the injector (random if unset)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--output", required=True, help="directory for the results (created)")
    return parser.parse_args()


def parse_workload(text):
    name, _, command = text.partition("=")
    name, _, calls = name.partition(":")
    if not name or not command:
        sys.exit(f"bad --workload {text!r}: expected NAME[:CALLS]=COMMAND")
    return {"name": name, "calls": calls or "coll", "command": shlex.split(command)}


def campaign_order(runs, levels, rng):
    """Levels cycle over the runs (each level equally often), then the runs are
    shuffled and interleaved lower half / upper half so levels alternate."""
    assigned = [levels[i % len(levels)] for i in range(runs)]
    cut = sorted(levels)[len(levels) // 2]
    low = [lv for lv in assigned if lv < cut]
    high = [lv for lv in assigned if lv >= cut]
    rng.shuffle(low)
    rng.shuffle(high)
    order = []
    while low or high:
        for half in (high, low) if len(high) >= len(low) else (low, high):
            if half:
                order.append(half.pop())
    return order


def injected_critical_path(h5):
    """(delays, most delays on one rank, max per-rank total s, critical path s and its
    upper bound, the per segment largest delays s (injected_truth.py), largest delays s in
    segments of usable groups) from the injector's logs."""
    logged = injected_truth.delays(h5)
    if logged["rank"].size == 0:
        return 0, 0, 0.0, 0.0, 0.0, 0.0
    ranks, spent = logged["rank"], logged["spent_s"]
    segment_ends = np.cumsum(h5["segments/duration_s"][:])
    # The profiler's segment of each delay, as the injector logged it; -1 (start-up) by time.
    by_time = np.minimum(np.searchsorted(segment_ends, logged["time_s"]), len(segment_ends) - 1)
    tagged = logged["segment"]
    segment = np.where((tagged >= 0) & (tagged < len(segment_ends)), tagged, by_time)
    per_rank_segment = {}
    for r, s, d in zip(ranks, segment, spent):
        per_rank_segment[(int(r), int(s))] = per_rank_segment.get((int(r), int(s)), 0.0) + float(d)
    per_segment_max = {}
    for (r, s), total in per_rank_segment.items():
        per_segment_max[s] = max(per_segment_max.get(s, 0.0), total)
    per_rank = {}
    for r, d in zip(ranks, spent):
        per_rank[int(r)] = per_rank.get(int(r), 0.0) + float(d)
    most_delays = int(np.max(np.unique(ranks, return_counts=True)[1]))
    # The share Tremor can see at all: delays in segments of usable groups.
    assessed = 0.0
    if "analysis/segments/group" in h5 and "analysis/groups/index" in h5:
        segment_group = h5["analysis/segments/group"][:]
        usable = set(int(g) for g in h5["analysis/groups/index"][:])
        assessed = sum(v for s, v in per_segment_max.items() if s < len(segment_group) and int(segment_group[s]) in usable)
    critical, largest = injected_truth.critical_path(h5)
    return len(ranks), most_delays, max(per_rank.values()), critical, largest, float(assessed)


def run_once(args, workload, out_dir, level, probability, seed, mean, sd):
    env = {"TREMOR_INJECT_MEAN_US": f"{mean:g}", "TREMOR_INJECT_SD_US": f"{sd:g}",
           "TREMOR_INJECT_PROBABILITY": f"{probability:.6g}", "TREMOR_INJECT_CALLS": workload["calls"],
           "TREMOR_INJECT_RANKS": args.inject_ranks, "TREMOR_INJECT_SEED": str(seed),
           **injected_truth.TRACE_SETTINGS}
    preload = f"{args.profiler} {args.injector}"
    wall, h5_path, json_path = common.run_under_launcher(args.launcher, args.np, preload, workload["command"], env,
                                                         out_dir, args.timeout)
    report = common.read_report(json_path)
    with h5py.File(h5_path, "r") as h5:
        delays, most_delays, rank_max, critical, largest, critical_assessed = injected_critical_path(h5)
        durations = h5["segments/duration_s"][:]
        run_time = float(h5.attrs["run_time_s"])
    estimated = report.get("interference_percent")
    continuous = report.get("continuous_interference_percent")
    return {"level_percent": level, "inject_calls": workload["calls"], "inject_ranks": args.inject_ranks,
            "inject_probability": probability, "inject_mean_us": mean, "inject_sd_us": sd,
            "inject_seed": seed, "wall_s": wall, "run_time_s": run_time, "injected_delays": delays,
            "_most_delays_on_a_rank": most_delays,
            "injected_rank_max_s": rank_max, "injected_critical_path_s": critical,
            "injected_percent": 100.0 * critical / run_time,
            "injected_largest_percent": 100.0 * largest / run_time,
            "injected_assessed_percent": 100.0 * critical_assessed / run_time,
            "estimated_percent": float("nan") if estimated is None else float(estimated),
            "estimated_continuous_percent": float("nan") if continuous is None else float(continuous),
            "paper_mad4_percent": float(report.get("paper_mad4_percent", float("nan"))),
            "intrinsic_run_time_s": float(report.get("intrinsic_run_time_s", float("nan"))),
            "estimate_class": report.get("class") or "none", "segments": report.get("segments"),
            "usable_segments": report.get("usable_segments"), "counter_source": report.get("counter_source"),
            "usable_time_percent": report.get("usable_time_percent"), "boundary_rate_hz": report.get("boundary_rate_hz"),
            "h5_file": h5_path, "_durations": durations, "_scoring": common.Scoring.of_report(report),
            "machine_percent": common.read_machine_load(out_dir, run_time)}


def eligible_calls(args, workload, out_dir):
    """Calibration: probability 1, 1 µs delays, so every eligible call is logged.
    Returns (run time s, eligible calls on the most delayed rank)."""
    row = run_once(args, workload, out_dir, 0.0, 1.0, 1, 1.0, 0.0)  # 1 µs: logged but negligible
    return row["run_time_s"], max(1, row["_most_delays_on_a_rank"])


def add_measured(rows):
    """Measured interference against the workload's fastest run (see the header)."""
    scoring = rows[0]["_scoring"]
    fastest = min(rows, key=lambda r: r["run_time_s"])
    reference = fastest["_durations"]
    for row in rows:
        t, t_min = row["run_time_s"], fastest["run_time_s"]
        n = min(len(reference), len(row["_durations"]))
        timed = reference[:n] > 0
        stretch = float(np.median(row["_durations"][:n][timed] / reference[:n][timed])) if timed.any() else 1.0
        displacement = min(max(0.0, t - t_min), t_min * max(0.0, stretch - 1.0))
        row["fastest_run_time_s"] = t_min
        row["raw_measured_percent"] = 100.0 * (t - t_min) / t
        row["median_displacement_s"] = displacement
        row["measured_percent"] = 100.0 * max(0.0, t - t_min - displacement) / t
        row["measured_class"] = scoring.interference_class(row["measured_percent"])
        row["p_measured"] = scoring.probability_high(row["measured_percent"])
        row["p_injected"] = scoring.probability_high(row["injected_percent"])
        estimated = row["estimated_percent"]
        if np.isnan(estimated):
            row.update(p_estimated=float("nan"), accuracy=float("nan"), abs_delta_pp=float("nan"), same_class=False,
                       accuracy_vs_injected=float("nan"))
            continue
        row["accuracy_vs_injected"] = 1.0 - abs(row["p_injected"] - scoring.probability_high(estimated))
        row["p_estimated"] = scoring.probability_high(estimated)
        row["accuracy"] = 1.0 - abs(row["p_measured"] - row["p_estimated"])
        row["abs_delta_pp"] = abs(row["measured_percent"] - estimated)
        row["same_class"] = row["measured_class"] == row["estimate_class"]


def summarize(rows, workloads):
    summary = []
    for name in workloads:
        mine = [r for r in rows if r["workload"] == name]
        accuracy = np.array([r["accuracy"] for r in mine], dtype=float)
        delta = np.array([r["abs_delta_pp"] for r in mine], dtype=float)
        truth = np.array([abs(r["injected_percent"] - r["estimated_percent"]) for r in mine], dtype=float)
        truth_accuracy = np.array([r["accuracy_vs_injected"] for r in mine], dtype=float)
        summary.append({"workload": name, "runs": len(mine),
                        "median_accuracy": float(np.nanmedian(accuracy)) if len(mine) else float("nan"),
                        "min_accuracy": float(np.nanmin(accuracy)) if len(mine) else float("nan"),
                        "median_abs_delta_pp": float(np.nanmedian(delta)) if len(mine) else float("nan"),
                        "max_abs_delta_pp": float(np.nanmax(delta)) if len(mine) else float("nan"),
                        "class_agreement": float(np.mean([r["same_class"] for r in mine])) if mine else float("nan"),
                        "median_injected_vs_estimated_abs_pp": float(np.nanmedian(truth)) if mine else float("nan"),
                        "median_accuracy_vs_injected": float(np.nanmedian(truth_accuracy)) if mine else float("nan"),
                        "min_accuracy_vs_injected": float(np.nanmin(truth_accuracy)) if mine else float("nan")})
    return summary


def plot(rows, workloads, out, scoring):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(workloads), 1, figsize=(9, 3.6 * len(workloads)), squeeze=False)
    for axis, name in zip(axes[:, 0], workloads):
        mine = sorted((r for r in rows if r["workload"] == name), key=lambda r: r["run_time_s"])
        x = np.arange(len(mine))
        top = max([30.0] + [v for r in mine for v in (r["measured_percent"], r["estimated_percent"],
                                                       r["injected_percent"]) if np.isfinite(v)]) * 1.1
        axis.axhspan(0, scoring.medium_from, color="tab:green", alpha=0.12, label="low")
        axis.axhspan(scoring.medium_from, scoring.high_above, color="tab:orange", alpha=0.12, label="medium")
        axis.axhspan(scoring.high_above, top, color="tab:red", alpha=0.12, label="high")
        axis.plot(x, [r["measured_percent"] for r in mine], "o-", label="measured (continuous removed)")
        axis.plot(x, [r["estimated_percent"] for r in mine], "s--", label="Tremor estimate")
        axis.plot(x, [r["injected_percent"] for r in mine], "x:", color="grey", label="injected critical path")
        axis.set_ylim(0, top)
        axis.set_xticks(x, [f"{r['run_time_s']:.2f}" for r in mine], rotation=60, fontsize=7)
        axis.set_xlabel("run time, s (runs sorted by run time)")
        axis.set_ylabel("interference, % of run time")
        axis.set_title(name)
        axis.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "estimated_vs_measured.png"), dpi=110)
    plt.close(fig)
    fig, axis = plt.subplots(figsize=(max(4, 2 * len(workloads)), 4))
    data = [[r["accuracy"] for r in rows if r["workload"] == name and np.isfinite(r["accuracy"])]
            for name in workloads]
    axis.boxplot(data)
    axis.set_xticks(range(1, len(workloads) + 1), workloads)
    axis.axhline(0.95, color="tab:green", linestyle="--", linewidth=1, label="median target 0.95")
    axis.axhline(0.85, color="tab:red", linestyle=":", linewidth=1, label="minimum target 0.85")
    axis.set_ylabel("accuracy = 1 − |p_measured − p_estimated|")
    axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "accuracy_boxplot.png"), dpi=110)
    plt.close(fig)


def main():
    args = parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    rng = random.Random(seed)
    levels = [float(v) for v in args.levels.split(",")]
    if any(not 0 <= lv < 100 for lv in levels):
        sys.exit("levels must be in [0, 100)")
    os.makedirs(args.output, exist_ok=True)
    workloads = [parse_workload(w) for w in args.workload]
    rows, plan = [], {"seed": seed, "arguments": dict(vars(args)), "workloads": {}}
    for workload in workloads:
        base = os.path.join(args.output, "runs", workload["name"])
        t0, calls = eligible_calls(args, workload, os.path.join(base, "calibration"))
        delay_us = args.delay_us if args.delay_us is not None else args.delay_calls * 1e6 * t0 / calls
        order = campaign_order(args.runs, levels, rng)
        plan["workloads"][workload["name"]] = {"calibration_run_time_s": t0, "eligible_calls": calls,
                                               "delay_us": delay_us,
                                               "order": order, "command": workload["command"]}
        mine = []
        for position, level in enumerate(order):
            injected = t0 * level / (100.0 - level)
            probability = min(1.0, injected / (calls * delay_us * 1e-6))
            run_seed = seed + 1000 * position + 1
            row = run_once(args, workload, os.path.join(base, f"run{position:03d}"), level, probability, run_seed,
                           delay_us, delay_us * args.delay_sd_fraction)
            row.update(workload=workload["name"], order=position, run=position)
            print(f"{workload['name']} run {position}: level {level:g} % p={probability:.3g} "
                  f"T={row['run_time_s']:.3f} s est={row['estimated_percent']:.2f} % "
                  f"injected={row['injected_percent']:.2f} %", flush=True)
            mine.append(row)
        add_measured(mine)
        rows += mine
    names = [w["name"] for w in workloads]
    scoring = rows[0]["_scoring"]
    common.write_csv(os.path.join(args.output, "runs.csv"), rows, RUN_COLUMNS)
    summary = summarize(rows, names)
    common.write_csv(os.path.join(args.output, "summary.csv"), summary, SUMMARY_COLUMNS)
    common.write_markdown_table(
        os.path.join(args.output, "summary.md"), "Interference campaign: Tremor estimate vs measured", summary,
        SUMMARY_COLUMNS, [f"Seed {seed}; {args.runs} runs per workload at levels {args.levels} %; "
                          "accuracy = 1 − |p_measured − p_estimated| "
                          f"(logistic k = {scoring.steepness:g}, x0 = {scoring.midpoint:g})."])
    with open(os.path.join(args.output, "campaign.json"), "w") as handle:
        json.dump(common.portable_paths(plan), handle, indent=1)
    plot(rows, names, args.output, scoring)
    with open(os.path.join(args.output, "summary.md")) as handle:
        print(handle.read())


if __name__ == "__main__":
    main()
