#!/usr/bin/python3
"""Scale campaign: Tremor's run-time predictions against runs at the larger sizes.

For each workload (an MPI command, weak scaling: the work per rank does not
depend on the process count) the campaign repeats, --runs times, one run at
the base size and one at each target size, interleaved so a drift of the
shared machine's load touches every size alike. Every run has Tremor
preloaded; the base runs ask for predictions at factors target/base
(TREMOR_SCALES) and the JSON report's `predictions` (method, factor,
processes, median_s, the CI of the expected run time ci_low_s/ci_high_s and
the prediction interval for one run pi_low_s/pi_high_s) and its
`prediction_headline` are kept. Each prediction of each base run is then
compared with each actual run at that size (run_time_s of its run file:
MPI_Init exit to MPI_Finalize entry, max over ranks, the quantity Tremor
predicts): whether the actual time lies inside each interval, and the
relative error of the median, (median − actual) / actual. The method
`headline` is, per base run, the method its report led with.

Workloads: --workload NAME=COMMAND (repeatable), or a ready --suite
quick|standard of test/campaigns/ftq_sleep workloads (--apps: the folder
holding ftq_sleep): Normal, lognormal and heavy-tailed sleeps, and the same
Normal times computed instead of slept (bsp-compute). A workload named by
--dedicated (the suite's bsp-compute) needs a core per rank: sizes above the
machine's cores (--cores) are not run, and coverage.md says so.
--launcher-for NAME=LAUNCHER gives one workload its own launcher (e.g. one
that pins ranks to cores); --ld-library-path is prepended to the runs'
LD_LIBRARY_PATH (an MPI outside the system paths). Example, 16 cores, an
MPICH build without a system MPI:

  scale_campaign.py --suite quick --apps B/test/campaigns \
    --launcher "mpiexec.hydra -launcher fork" --ld-library-path /opt/mpich/lib \
    --launcher-for "bsp-compute=mpiexec.hydra -launcher fork -bind-to core" \
    --profiler B/interpose/libtremor-mpich.so --base-np 4 --target-np 8,16 --output /tmp/scale

Outputs in --output: runs.csv (every run, with the 1-minute load average
when it started), predictions.csv (every prediction), comparisons.csv
(prediction × actual run), coverage.csv and coverage.md (per workload,
method and size: coverage and median width of both intervals, median error,
run-to-run spread of the actual runs), stability.csv/.md,
scale_<workload>.png, campaign.json (arguments, machine, date, load).

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
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

RUN_COLUMNS = ["workload", "repetition", "processes", "role", "wall_s", "run_time_s", "interference_percent",
               "segments", "load_1min", "h5_file"]
PREDICTION_COLUMNS = ["workload", "repetition", "base_processes", "method", "headline_method", "factor", "processes",
                      "median_s", "ci_low_s", "ci_high_s", "pi_low_s", "pi_high_s", "replicas_failed",
                      "variance_inflation"]
COMPARISON_COLUMNS = PREDICTION_COLUMNS + ["actual_repetition", "actual_run_time_s", "inside_pi", "inside_ci",
                                           "relative_error"]
STABILITY_COLUMNS = ["workload", "method", "processes", "predictions", "median_predicted_s", "cv_of_medians_percent",
                     "median_pi_width_percent", "median_ci_width_percent"]
COVERAGE_COLUMNS = ["workload", "method", "processes", "predictions", "pairs", "coverage_pi", "coverage_ci",
                    "median_pi_width_percent", "median_ci_width_percent", "median_error_percent",
                    "median_abs_error_percent", "actual_sd_percent", "median_predicted_s", "median_actual_s"]

# Ready workloads (--suite): ftq_sleep with a 10 ms mean per iteration.
SUITES = {"quick": {"iterations": 100, "runs": 4}, "standard": {"iterations": 200, "runs": 8}}
SUITE_DEDICATED = ["bsp-compute"]


def suite_workloads(apps, iterations):
    ftq = os.path.join(apps, "ftq_sleep")
    common = f"{ftq} -n {iterations} -m 10000 -r {{seed}}"
    return [f"ftq-normal={common} -s 1000",
            f"ftq-lognormal={common} -L 0.3",
            # 1 % of the sleeps (per rank and iteration) longer by 3× the mean.
            f"ftq-heavy={common} -s 1000 -t 0.01 -T 40000",
            f"bsp-compute={common} -s 1000 -C"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher",
                        help="launcher words, e.g. 'mpirun.openmpi --oversubscribe --allow-run-as-root' or "
                             "'mpiexec.hydra -launcher fork'; the campaign adds -n N")
    parser.add_argument("--launcher-for", action="append", default=[], metavar="NAME=LAUNCHER",
                        help="another launcher for one workload (e.g. one that pins ranks to cores)")
    parser.add_argument("--ld-library-path", default="",
                        help="prepended to LD_LIBRARY_PATH of every run (an MPI outside the system paths)")
    parser.add_argument("--profiler", help="libtremor-<flavour>.so")
    parser.add_argument("--workload", action="append", default=[], metavar="NAME=COMMAND")
    parser.add_argument("--suite", choices=sorted(SUITES),
                        help="the ready ftq_sleep workloads (quick: 100 iterations, 4 runs; standard: 200, 8)")
    parser.add_argument("--apps", help="folder holding ftq_sleep, for --suite (B/test/campaigns)")
    parser.add_argument("--dedicated", action="append", default=[], metavar="NAME",
                        help="a workload that needs a core per rank: sizes above --cores are not run")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="cores of the machine (for --dedicated)")
    parser.add_argument("--base-np", type=int, default=4, help="processes of the base runs")
    parser.add_argument("--target-np", default="8,16,32", help="sizes to run and compare (comma list)")
    parser.add_argument("--predict-only-np", default="",
                        help="further sizes to predict without running them (checks monotonicity)")
    parser.add_argument("--runs", type=int, help="repetitions of every size (3; a suite sets its own)")
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
    if args.suite:
        if not args.apps:
            parser.error("--suite needs --apps (the folder holding ftq_sleep)")
        args.workload = suite_workloads(args.apps, SUITES[args.suite]["iterations"]) + args.workload
        args.dedicated = SUITE_DEDICATED + args.dedicated
        if args.runs is None:
            args.runs = SUITES[args.suite]["runs"]
    if args.runs is None:
        args.runs = 3
    if args.reanalyse:
        if not args.tremor:
            parser.error("--reanalyse needs --tremor")
        if os.path.abspath(args.reanalyse) == os.path.abspath(args.output):
            parser.error("--output must differ from the --reanalyse directory (its files are the input)")
    elif not (args.launcher and args.profiler and args.workload):
        parser.error("--launcher, --profiler and --workload (or --suite) are required unless --reanalyse is given")
    return args


def load_average():
    try:
        with open("/proc/loadavg") as handle:
            return float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def machine_facts(cores):
    """What the page of results names: cores, CPU model, memory, the date."""
    model = ""
    try:
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cores": cores, "cpu_model": model, "date": time.strftime("%Y-%m-%d"), "load_at_start": load_average()}


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
    if args.ld_library_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (args.ld_library_path, os.environ.get("LD_LIBRARY_PATH"))
                                                 if p)
    load = load_average()
    wall, h5_path, json_path = common.run_under_launcher(workload["launcher"], processes, args.profiler,
                                                         command, env, out_dir, args.timeout)
    report = common.read_report(json_path)
    with h5py.File(h5_path, "r") as h5:
        run_time = float(h5.attrs["run_time_s"])
    interference = report.get("interference_percent")
    return {"wall_s": wall, "run_time_s": run_time, "segments": report.get("segments"), "h5_file": h5_path,
            "interference_percent": float("nan") if interference is None else float(interference),
            "load_1min": load, "_report": report}


def as_float(value):
    return float("nan") if value is None else float(value)


def prediction_rows(report, workload, repetition, base_np):
    """Every method's predictions, and the headline's again as method `headline`."""
    headline = (report.get("prediction_headline") or {}).get("method") or ""

    def row(p, method):
        return {"workload": workload, "repetition": repetition, "base_processes": base_np, "method": method,
                "headline_method": headline, "factor": p.get("factor"), "processes": p.get("processes"),
                "median_s": as_float(p.get("median_s")), "ci_low_s": as_float(p.get("ci_low_s")),
                "ci_high_s": as_float(p.get("ci_high_s")), "pi_low_s": as_float(p.get("pi_low_s")),
                "pi_high_s": as_float(p.get("pi_high_s")), "replicas_failed": p.get("replicas_failed"),
                "variance_inflation": as_float(p.get("variance_inflation"))}

    predictions = report.get("predictions") or []
    return ([row(p, p.get("method")) for p in predictions] +
            [row(p, "headline") for p in predictions if headline and p.get("method") == headline])


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
        for key in ("wall_s", "run_time_s", "interference_percent", "load_1min"):
            run[key] = float(run.get(key) or "nan")
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
        predictions += prediction_rows(report, run["workload"], run["repetition"], run["processes"])
        print(f"{run['workload']} rep {run['repetition']}: re-analysed", flush=True)
    names = list(campaign["workloads"])
    return runs, predictions, names, recorded


def inside(low, high, actual):
    return bool(np.isfinite(low) and np.isfinite(high) and low <= actual <= high)


def compare(predictions, runs):
    comparisons = []
    for prediction in predictions:
        for run in runs:
            if run["workload"] != prediction["workload"] or run["processes"] != prediction["processes"]:
                continue
            actual = run["run_time_s"]
            row = dict(prediction)
            row.update(actual_repetition=run["repetition"], actual_run_time_s=actual,
                       inside_pi=inside(prediction["pi_low_s"], prediction["pi_high_s"], actual),
                       inside_ci=inside(prediction["ci_low_s"], prediction["ci_high_s"], actual),
                       relative_error=(prediction["median_s"] - actual) / actual)
            comparisons.append(row)
    return comparisons


def widths(rows, low, high):
    return np.array([(p[high] - p[low]) / p["median_s"] for p in rows], dtype=float)


def coverage_table(predictions, comparisons, runs):
    keys = sorted({(c["workload"], c["method"], c["processes"]) for c in comparisons})
    table = []
    for workload, method, processes in keys:
        key = (workload, method, processes)
        pairs = [c for c in comparisons if (c["workload"], c["method"], c["processes"]) == key]
        mine = [p for p in predictions if (p["workload"], p["method"], p["processes"]) == key]
        errors = np.array([c["relative_error"] for c in pairs], dtype=float)
        actual = np.array([r["run_time_s"] for r in runs if r["workload"] == workload and r["processes"] == processes])
        spread = float(np.std(actual, ddof=1) / np.mean(actual)) if actual.size > 1 else float("nan")
        table.append({"workload": workload, "method": method, "processes": processes, "predictions": len(mine),
                      "pairs": len(pairs), "coverage_pi": float(np.mean([c["inside_pi"] for c in pairs])),
                      "coverage_ci": float(np.mean([c["inside_ci"] for c in pairs])),
                      "median_pi_width_percent": 100.0 * float(np.nanmedian(widths(mine, "pi_low_s", "pi_high_s"))),
                      "median_ci_width_percent": 100.0 * float(np.nanmedian(widths(mine, "ci_low_s", "ci_high_s"))),
                      "median_error_percent": 100.0 * float(np.nanmedian(errors)),
                      "median_abs_error_percent": 100.0 * float(np.nanmedian(np.abs(errors))),
                      "actual_sd_percent": 100.0 * spread,
                      "median_predicted_s": float(np.nanmedian([p["median_s"] for p in mine])),
                      "median_actual_s": float(np.median(actual))})
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
        finite = medians[np.isfinite(medians)]
        spread = float(np.std(finite, ddof=1) / np.mean(finite)) if finite.size > 1 else float("nan")
        table.append({"workload": workload, "method": method, "processes": processes, "predictions": len(mine),
                      "median_predicted_s": float(np.nanmedian(medians)),
                      "cv_of_medians_percent": 100.0 * spread,
                      "median_pi_width_percent": 100.0 * float(np.nanmedian(widths(mine, "pi_low_s", "pi_high_s"))),
                      "median_ci_width_percent": 100.0 * float(np.nanmedian(widths(mine, "ci_low_s", "ci_high_s")))})
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
        colour = f"C{index % 10}"
        for low_key, high_key, width, label in (("pi_low_s", "pi_high_s", 1.0, f"{method} (median, 95 % PI)"),
                                                ("ci_low_s", "ci_high_s", 4.0, None)):
            low = median - np.array([p[low_key] for p in rows])
            high = np.array([p[high_key] for p in rows]) - median
            axis.errorbar(x, median, yerr=[np.maximum(low, 0), np.maximum(high, 0)], fmt="o", capsize=3 if label else 0,
                          elinewidth=width, alpha=0.7, color=colour, label=label)
    axis.set_xscale("log", base=2)
    sizes = sorted({r["processes"] for r in mine} | {p["processes"] for p in predictions if p["workload"] == workload})
    axis.set_xticks(sizes, [str(s) for s in sizes])
    axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_xlabel("processes")
    axis.set_ylabel("run time, s")
    axis.set_title(f"{workload}: predicted vs actual run time (thin: PI for one run, thick: CI)")
    axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"scale_{workload}.png"), dpi=110)
    plt.close(fig)


def write_results(output, runs, predictions, names, base_np, target_np, repetitions, settings):
    comparisons = compare(predictions, runs)
    coverage = coverage_table(predictions, comparisons, runs)
    common.write_csv(os.path.join(output, "runs.csv"), runs, RUN_COLUMNS)
    common.write_csv(os.path.join(output, "predictions.csv"), predictions, PREDICTION_COLUMNS)
    common.write_csv(os.path.join(output, "comparisons.csv"), comparisons, COMPARISON_COLUMNS)
    common.write_csv(os.path.join(output, "coverage.csv"), coverage, COVERAGE_COLUMNS)
    loads = [r["load_1min"] for r in runs if np.isfinite(r.get("load_1min", float("nan")))]
    machine = settings.get("machine") or {}
    notes = [f"Base {base_np} processes, targets {target_np}, {repetitions} repetitions; coverage = share of "
             "(base-run prediction, actual run) pairs whose actual run time lies inside the interval: coverage_pi "
             "the prediction interval for one run, coverage_ci the CI of the expected run time; widths are "
             "(high − low) / median; actual_sd_percent is the run-to-run spread of the actual runs. Method "
             "`headline`: each base run's headline method."]
    if machine:
        notes.append(f"Machine: {machine.get('cores')} cores ({machine.get('cpu_model')}), {machine.get('date')}.")
    if loads:
        notes.append(f"1-minute load average when the runs started: median {np.median(loads):.1f}, "
                     f"range {min(loads):.1f}–{max(loads):.1f}.")
    for skipped in settings.get("not_run", []):
        notes.append(f"Not run: {skipped}.")
    common.write_markdown_table(
        os.path.join(output, "coverage.md"), "Scale campaign: interval coverage and median error",
        coverage, COVERAGE_COLUMNS, notes)
    stability = stability_table(predictions)
    common.write_csv(os.path.join(output, "stability.csv"), stability, STABILITY_COLUMNS)
    common.write_markdown_table(
        os.path.join(output, "stability.md"), "Scale campaign: stability of the predictions over base runs",
        stability, STABILITY_COLUMNS,
        ["cv_of_medians_percent: standard deviation / mean of the predicted medians over the base repetitions; "
         "widths: (high − low) / median."])
    with open(os.path.join(output, "campaign.json"), "w") as handle:
        json.dump(common.portable_paths(settings), handle, indent=1)
    for name in names:
        if any(r["workload"] == name for r in runs):  # a dedicated workload may not have run at all
            plot(name, runs, predictions, output)
    with open(os.path.join(output, "coverage.md")) as handle:
        print(handle.read())


def parse_workloads(args):
    launchers = {}
    for text in args.launcher_for:
        name, _, launcher = text.partition("=")
        if not name or not launcher:
            sys.exit(f"bad --launcher-for {text!r}: expected NAME=LAUNCHER")
        launchers[name] = launcher
    workloads = []
    for text in args.workload:
        name, _, command = text.partition("=")
        if not name or not command:
            sys.exit(f"bad --workload {text!r}: expected NAME=COMMAND")
        workloads.append({"name": name, "command": shlex.split(command),
                          "launcher": launchers.get(name, args.launcher)})
    return workloads


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
    workloads = parse_workloads(args)
    machine = machine_facts(args.cores)
    runs, predictions, not_run = [], [], []
    for workload in workloads:
        sizes = [args.base_np] + targets
        if workload["name"] in args.dedicated:
            hosted = [size for size in sizes if size <= args.cores]
            if len(hosted) < len(sizes):
                not_run.append(f"{workload['name']} at {', '.join(str(s) for s in sizes if s not in hosted)} "
                               f"processes: it needs a core per rank and the machine has {args.cores}")
            if args.base_np not in hosted:
                continue
            sizes = hosted
        for repetition in range(args.runs):
            for processes in sizes:
                role = "base" if processes == args.base_np else "target"
                out_dir = os.path.join(args.output, "runs", workload["name"], f"np{processes}_rep{repetition}")
                row = one_run(args, workload, processes, out_dir, scales if role == "base" else [], repetition)
                row.update(workload=workload["name"], repetition=repetition, processes=processes, role=role)
                print(f"{workload['name']} rep {repetition} np {processes}: T={row['run_time_s']:.3f} s "
                      f"(load {row['load_1min']:.1f})", flush=True)
                if role == "base":
                    predictions += prediction_rows(row["_report"], workload["name"], repetition, args.base_np)
                del row["_report"]
                runs.append(row)
    machine["load_at_end"] = load_average()
    settings = {"arguments": vars(args), "scales": scales, "machine": machine, "not_run": not_run,
                "workloads": {w["name"]: w["command"] for w in workloads}}
    for text in not_run:
        print(f"not run: {text}")
    write_results(args.output, runs, predictions, [w["name"] for w in workloads], args.base_np, args.target_np,
                  args.runs, settings)


if __name__ == "__main__":
    main()
