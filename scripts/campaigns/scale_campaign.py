#!/usr/bin/python3
"""Scale campaign: Tremor's run-time predictions against runs at the larger sizes.

For each workload (an MPI command, weak scaling: the work per rank does not
depend on the process count) the campaign repeats, --runs times, one run at
the base size and one at each target size, interleaved so a drift of the
shared machine's load touches every size alike. Every run has Tremor
preloaded; the base runs ask for predictions at factors target/base
(TREMOR_SCALES) and the JSON report's `predictions` (method, factor,
processes, median_s, ci_low_s, ci_high_s) are kept. Each prediction of each
base run is then compared with each actual run at that size (run_time_s of its
run file: MPI_Init exit to MPI_Finalize entry, max over ranks, the quantity
Tremor predicts): whether the actual time lies inside the 95 % interval and
the relative error of the median, (median − actual) / actual.

Use a sleep-based workload (bsp_demo -S, or test/campaigns/ftq_sleep) under
Open MPI with --oversubscribe: sleeping ranks scale honestly on a machine with
fewer cores than ranks, and Open MPI's barriers stay in microseconds there.

Outputs in --output: runs.csv (every run), predictions.csv (every
prediction), comparisons.csv (prediction × actual run), coverage.csv and
coverage.md (per workload, method and size), scale_<workload>.png,
campaign.json.

Re-analysis (--reanalyse DIR --tremor PATH): reads DIR's runs.csv and
campaign.json, re-runs `tremor analyze --json` on every base run's file (read
only; the files stay as they are) with the campaign's scales and replicas, and
writes the same outputs to --output from the new predictions and the recorded
actual runs. No MPI job runs: this re-scores a finished campaign after a
change to the estimators.
"""
import argparse
import csv
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

RUN_COLUMNS = ["workload", "repetition", "processes", "role", "wall_s", "run_time_s", "interference_percent",
               "segments", "h5_file"]
PREDICTION_COLUMNS = ["workload", "repetition", "base_processes", "method", "factor", "processes", "median_s",
                      "ci_low_s", "ci_high_s", "replicas_failed", "variance_inflation"]
COMPARISON_COLUMNS = PREDICTION_COLUMNS + ["actual_repetition", "actual_run_time_s", "inside", "relative_error"]
STABILITY_COLUMNS = ["workload", "method", "processes", "predictions", "median_predicted_s", "cv_of_medians_percent",
                     "median_interval_width_percent"]
COVERAGE_COLUMNS = ["workload", "method", "processes", "predictions", "pairs", "coverage", "median_abs_error_percent",
                    "median_error_percent", "median_predicted_s", "median_actual_s"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher",
                        help="launcher words, e.g. 'mpirun.openmpi --oversubscribe --allow-run-as-root'")
    parser.add_argument("--profiler", help="libtremor-<flavour>.so")
    parser.add_argument("--workload", action="append", metavar="NAME=COMMAND")
    parser.add_argument("--base-np", type=int, default=4, help="processes of the base runs")
    parser.add_argument("--target-np", default="8,16,32", help="sizes to run and compare (comma list)")
    parser.add_argument("--predict-only-np", default="",
                        help="further sizes to predict without running them (checks monotonicity)")
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every size")
    parser.add_argument("--replicas", type=int, default=1000, help="TREMOR_BOOTSTRAP_REPLICAS")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--seed-option", metavar="OPTION",
                        help="workload option taking a seed (ftq_sleep: --seed-option=-r); every run gets its own "
                             "seed, so repetitions and sizes are independent draws, not replays of one")
    parser.add_argument("--seed-base", type=int, default=1,
                        help="first run seed (seeds are SEED_BASE + 1000*repetition + processes); a new value draws a "
                             "campaign independent of an earlier one")
    parser.add_argument("--output", required=True)
    parser.add_argument("--reanalyse", metavar="DIR", help="re-score the finished campaign in DIR (no MPI runs)")
    parser.add_argument("--tremor", help="the tremor CLI, for --reanalyse")
    args = parser.parse_args()
    if args.reanalyse:
        if not args.tremor:
            parser.error("--reanalyse needs --tremor")
        if os.path.abspath(args.reanalyse) == os.path.abspath(args.output):
            parser.error("--output must differ from the --reanalyse directory (its files are the input)")
    elif not (args.launcher and args.profiler and args.workload):
        parser.error("--launcher, --profiler and --workload are required unless --reanalyse is given")
    return args


def factors_for(base, sizes):
    factors = []
    for size in sizes:
        if size % base:
            sys.exit(f"size {size} is not a multiple of the base size {base}")
        factors.append(size // base)
    return factors


def run_seed(repetition, processes, base=1):
    return base + 1000 * repetition + processes


def one_run(args, workload, processes, out_dir, scales, repetition):
    # "{seed}" in a workload's command is this run's own seed (workloads without randomness have none).
    seed = str(run_seed(repetition, processes, args.seed_base))
    command = [word.replace("{seed}", seed) for word in workload["command"]]
    if args.seed_option:
        command += [args.seed_option, seed]
    env = {"TREMOR_SCALES": ",".join(str(f) for f in scales) or "2",
           "TREMOR_BOOTSTRAP_REPLICAS": str(args.replicas)}
    wall, h5_path, json_path = common.run_under_launcher(args.launcher, processes, args.profiler,
                                                         command, env, out_dir, args.timeout)
    report = common.read_report(json_path)
    with h5py.File(h5_path, "r") as h5:
        run_time = float(h5.attrs["run_time_s"])
    interference = report.get("interference_percent")
    return {"wall_s": wall, "run_time_s": run_time, "segments": report.get("segments"), "h5_file": h5_path,
            "interference_percent": float("nan") if interference is None else float(interference),
            "_predictions": report.get("predictions") or []}


def as_float(value):
    return float("nan") if value is None else float(value)


def prediction_rows(report_predictions, workload, repetition, base_np):
    return [{"workload": workload, "repetition": repetition, "base_processes": base_np, "method": p.get("method"),
             "factor": p.get("factor"), "processes": p.get("processes"), "median_s": as_float(p.get("median_s")),
             "ci_low_s": as_float(p.get("ci_low_s")), "ci_high_s": as_float(p.get("ci_high_s")),
             "replicas_failed": p.get("replicas_failed"),
             "variance_inflation": as_float(p.get("variance_inflation"))} for p in report_predictions]


def reanalysed_campaign(args):
    """Runs of the finished campaign in args.reanalyse and fresh predictions
    from its base-run files."""
    with open(os.path.join(args.reanalyse, "campaign.json")) as handle:
        campaign = json.load(handle)
    recorded = campaign["arguments"]
    with open(os.path.join(args.reanalyse, "runs.csv"), newline="") as handle:
        runs = list(csv.DictReader(handle))
    for run in runs:
        for key in ("repetition", "processes", "segments"):
            run[key] = int(run[key])
        for key in ("wall_s", "run_time_s", "interference_percent"):
            run[key] = float(run[key])
    scales = ",".join(str(s) for s in campaign["scales"])
    predictions = []
    for run in runs:
        if run["role"] != "base":
            continue
        command = [args.tremor, "analyze", run["h5_file"], "--json", "--scales", scales,
                   "--replicas", str(recorded["replicas"])]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
        report = json.loads(done.stdout)
        predictions += prediction_rows(report.get("predictions") or [], run["workload"], run["repetition"],
                                       run["processes"])
        print(f"{run['workload']} rep {run['repetition']}: re-analysed", flush=True)
    names = list(campaign["workloads"])
    return runs, predictions, names, recorded


def compare(predictions, runs):
    comparisons = []
    for prediction in predictions:
        for run in runs:
            if run["workload"] != prediction["workload"] or run["processes"] != prediction["processes"]:
                continue
            actual = run["run_time_s"]
            low, high, median = prediction["ci_low_s"], prediction["ci_high_s"], prediction["median_s"]
            row = dict(prediction)
            row.update(actual_repetition=run["repetition"], actual_run_time_s=actual,
                       inside=bool(np.isfinite(low) and np.isfinite(high) and low <= actual <= high),
                       relative_error=(median - actual) / actual)
            comparisons.append(row)
    return comparisons


def coverage_table(predictions, comparisons):
    keys = sorted({(c["workload"], c["method"], c["processes"]) for c in comparisons})
    table = []
    for workload, method, processes in keys:
        key = (workload, method, processes)
        pairs = [c for c in comparisons if (c["workload"], c["method"], c["processes"]) == key]
        mine = [p for p in predictions if (p["workload"], p["method"], p["processes"]) == key]
        errors = np.array([c["relative_error"] for c in pairs], dtype=float)
        table.append({"workload": workload, "method": method, "processes": processes, "predictions": len(mine),
                      "pairs": len(pairs), "coverage": float(np.mean([c["inside"] for c in pairs])),
                      "median_abs_error_percent": 100.0 * float(np.nanmedian(np.abs(errors))),
                      "median_error_percent": 100.0 * float(np.nanmedian(errors)),
                      "median_predicted_s": float(np.nanmedian([p["median_s"] for p in mine])),
                      "median_actual_s": float(np.median([c["actual_run_time_s"] for c in pairs]))})
    return table


def stability_table(predictions):
    """Spread of each prediction over the base repetitions: how stable a fit
    is from one run to the next. Meaningful without any larger run, so it is
    the check for compute-bound workloads that cannot scale on this machine."""
    keys = sorted({(p["workload"], p["method"], p["processes"]) for p in predictions})
    table = []
    for workload, method, processes in keys:
        mine = [p for p in predictions if (p["workload"], p["method"], p["processes"]) == (workload, method, processes)]
        medians = np.array([p["median_s"] for p in mine], dtype=float)
        widths = np.array([(p["ci_high_s"] - p["ci_low_s"]) / p["median_s"] for p in mine], dtype=float)
        finite = medians[np.isfinite(medians)]
        spread = float(np.std(finite, ddof=1) / np.mean(finite)) if finite.size > 1 else float("nan")
        table.append({"workload": workload, "method": method, "processes": processes, "predictions": len(mine),
                      "median_predicted_s": float(np.nanmedian(medians)),
                      "cv_of_medians_percent": 100.0 * spread,
                      "median_interval_width_percent": 100.0 * float(np.nanmedian(widths))})
    return table


def plot(workload, runs, predictions, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    fig, axis = plt.subplots(figsize=(7, 4.5))
    mine = [r for r in runs if r["workload"] == workload]
    axis.scatter([r["processes"] for r in mine], [r["run_time_s"] for r in mine], color="black", zorder=3,
                 label="actual runs")
    methods = sorted({p["method"] for p in predictions if p["workload"] == workload})
    for index, method in enumerate(methods):
        rows = [p for p in predictions if p["workload"] == workload and p["method"] == method]
        offset = 1.0 + 0.04 * (index - (len(methods) - 1) / 2)  # side by side on the log axis
        x = np.array([p["processes"] for p in rows], dtype=float) * offset
        median = np.array([p["median_s"] for p in rows])
        low = median - np.array([p["ci_low_s"] for p in rows])
        high = np.array([p["ci_high_s"] for p in rows]) - median
        axis.errorbar(x, median, yerr=[np.maximum(low, 0), np.maximum(high, 0)], fmt="o", capsize=3, alpha=0.7,
                      label=f"{method} (median, 95 % interval)")
    axis.set_xscale("log", base=2)
    sizes = sorted({r["processes"] for r in mine} | {p["processes"] for p in predictions if p["workload"] == workload})
    axis.set_xticks(sizes, [str(s) for s in sizes])
    axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_xlabel("processes")
    axis.set_ylabel("run time, s")
    axis.set_title(f"{workload}: predicted vs actual run time")
    axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"scale_{workload}.png"), dpi=110)
    plt.close(fig)


def write_results(output, runs, predictions, names, base_np, target_np, repetitions, settings):
    comparisons = compare(predictions, runs)
    coverage = coverage_table(predictions, comparisons)
    common.write_csv(os.path.join(output, "runs.csv"), runs, RUN_COLUMNS)
    common.write_csv(os.path.join(output, "predictions.csv"), predictions, PREDICTION_COLUMNS)
    common.write_csv(os.path.join(output, "comparisons.csv"), comparisons, COMPARISON_COLUMNS)
    common.write_csv(os.path.join(output, "coverage.csv"), coverage, COVERAGE_COLUMNS)
    common.write_markdown_table(
        os.path.join(output, "coverage.md"), "Scale campaign: 95 % interval coverage and median error",
        coverage, COVERAGE_COLUMNS,
        [f"Base {base_np} processes, targets {target_np}, {repetitions} repetitions; coverage = share of "
         "(base-run prediction, actual run) pairs whose actual run time lies inside the interval."])
    stability = stability_table(predictions)
    common.write_csv(os.path.join(output, "stability.csv"), stability, STABILITY_COLUMNS)
    common.write_markdown_table(
        os.path.join(output, "stability.md"), "Scale campaign: stability of the predictions over base runs",
        stability, STABILITY_COLUMNS,
        ["cv_of_medians_percent: standard deviation / mean of the predicted medians over the base repetitions; "
         "median_interval_width_percent: (high − low) / median."])
    with open(os.path.join(output, "campaign.json"), "w") as handle:
        json.dump(common.portable_paths(settings), handle, indent=1)
    for name in names:
        plot(name, runs, predictions, output)
    with open(os.path.join(output, "coverage.md")) as handle:
        print(handle.read())


def main():
    args = parse_args()
    os.makedirs(args.output, exist_ok=True)
    if args.reanalyse:
        runs, predictions, names, recorded = reanalysed_campaign(args)
        with open(os.path.join(args.reanalyse, "campaign.json")) as handle:
            settings = json.load(handle)
        settings["reanalysed"] = {"source": os.path.abspath(args.reanalyse), "tremor": args.tremor}
        write_results(args.output, runs, predictions, names, recorded["base_np"], recorded["target_np"],
                      recorded["runs"], settings)
        return
    targets = [int(v) for v in args.target_np.split(",") if v]
    predict_only = [int(v) for v in args.predict_only_np.split(",") if v]
    scales = sorted(set(factors_for(args.base_np, targets + predict_only)))
    workloads = []
    for text in args.workload:
        name, _, command = text.partition("=")
        if not name or not command:
            sys.exit(f"bad --workload {text!r}: expected NAME=COMMAND")
        workloads.append({"name": name, "command": shlex.split(command)})
    runs, predictions = [], []
    for workload in workloads:
        for repetition in range(args.runs):
            for processes in [args.base_np] + targets:
                role = "base" if processes == args.base_np else "target"
                out_dir = os.path.join(args.output, "runs", workload["name"], f"np{processes}_rep{repetition}")
                row = one_run(args, workload, processes, out_dir, scales if role == "base" else [], repetition)
                row.update(workload=workload["name"], repetition=repetition, processes=processes, role=role)
                print(f"{workload['name']} rep {repetition} np {processes}: T={row['run_time_s']:.3f} s", flush=True)
                runs.append(row)
                if role == "base":
                    predictions += prediction_rows(row["_predictions"], workload["name"], repetition, args.base_np)
    settings = {"arguments": vars(args), "scales": scales,
                "workloads": {w["name"]: w["command"] for w in workloads}}
    write_results(args.output, runs, predictions, [w["name"] for w in workloads], args.base_np, args.target_np,
                  args.runs, settings)


if __name__ == "__main__":
    main()
