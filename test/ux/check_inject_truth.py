"""tremor-run --inject takes every injector setting; an injected run reports the truth.

usage: check_inject_truth.py DIR --tremor PATH --tremor-run PATH --launcher "cmd" --app BSP_DEMO --print-env-app APP
  Names: every setting of the injector's table (`tremor config --markdown
  injector`) reaches the environment through --inject; an unknown one, on the
  command line or in the environment, is refused with one line.
  Runs (2 ranks): slowdown and trace settings reach the injector (its logs
  show slowdown delays on rank 1 only and a traced row for every collective of
  rank 0); the run file's /ranks/injected_s, the JSON report's injector_truth
  and the text report's last line equal the sums of the injector logs'
  spent_us per rank; the machine's share is the kernel's run-queue delay (at
  least what the log's schedstat columns saw between the rank's first and last
  logged call); a run without the injector has none of them.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import shutil

import h5py

from ux_common import check, finish, mpi_run, run, single_run_file

parser = argparse.ArgumentParser()
parser.add_argument("directory")
for option in ("--tremor", "--tremor-run", "--launcher", "--app", "--print-env-app"):
    parser.add_argument(option, required=True)
options = parser.parse_args()
EXIT_USAGE = 2
clean_env = {"LD_PRELOAD": None, "TREMOR_LIBDIR": None, "TREMOR_OUTPUT_DIR": None, "TREMOR_REPORT": None}
for name in list(os.environ):
    if name.startswith("TREMOR_INJECT_"):
        clean_env[name] = None
# A log's spent_us has 3 decimals: each row may be off by 0.0005 us.
ROUNDING_S_PER_ROW = 0.0005e-6


def table_names():
    """The injector's settings, from its own table through the tool."""
    result = run([options.tremor, "config", "--markdown", "injector"])
    check(result.returncode == 0, f"tremor config --markdown injector: {result.stderr}")
    return re.findall(r"^\| `(TREMOR_INJECT_[A-Z0-9_]+)` \|", result.stdout, re.MULTILINE)


def printed_env(stdout):
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


def check_names():
    names = table_names()
    check("TREMOR_INJECT_SLOWDOWN" in names and "TREMOR_INJECT_TRACE" in names,
          f"the table has slowdown and trace: {names}")
    values = {name: str(index + 1) for index, name in enumerate(names)}
    spec = ",".join(f"{name[len('TREMOR_INJECT_'):].lower()}={value}" for name, value in values.items())
    result = run([options.tremor_run, "--inject", spec, options.print_env_app, "--print-env"], clean_env)
    check(result.returncode == 0, f"every table setting accepted: exit 0, got {result.returncode}: {result.stderr}")
    seen = printed_env(result.stdout)
    for name, value in values.items():
        check(seen.get(name) == value, f"--inject sets {name}={value}, got {seen.get(name)!r}")
    # Repeated --inject, short names without the unit, a full name, list values.
    result = run([options.tremor_run, "--inject", "mean=5,after=2", "--inject", "TREMOR_INJECT_TRACE=coll,p2p",
                  "--inject", "Slowdown=0.25", options.print_env_app, "--print-env"], clean_env)
    seen = printed_env(result.stdout)
    for name, value in (("TREMOR_INJECT_MEAN_US", "5"), ("TREMOR_INJECT_AFTER_S", "2"),
                        ("TREMOR_INJECT_TRACE", "coll,p2p"), ("TREMOR_INJECT_SLOWDOWN", "0.25")):
        check(seen.get(name) == value, f"repeated --inject sets {name}={value}, got {seen.get(name)!r}")

    for arguments, env, complaint in (
            (["--inject", "slowdwn=0.2"], {}, "unknown key 'slowdwn'"),
            (["--inject", "trace=coll,verbose=1"], {}, "unknown key 'verbose'"),
            (["--inject", "mean=1"], {"TREMOR_INJECT_SLOWDWN": "0.2"}, "'TREMOR_INJECT_SLOWDWN' is not a setting")):
        result = run([options.tremor_run] + arguments + [options.print_env_app, "--print-env"], {**clean_env, **env})
        check(result.returncode == EXIT_USAGE, f"{arguments} {env}: exit {EXIT_USAGE}, got {result.returncode}")
        check(complaint in result.stderr and result.stderr.count("\n") == 1,
              f"{arguments} {env}: one line saying {complaint!r}, got {result.stderr!r}")
        check("slowdown" in result.stderr.lower(), f"the message lists the known settings: {result.stderr!r}")
        check("LD_PRELOAD" not in result.stdout, f"{arguments}: the application was not started")


def inject_logs(directory):
    """Rows of each rank's delay log: {rank: [row, ...]}."""
    logs = {}
    for path in glob.glob(os.path.join(directory, "tremor-inject_*.csv")):
        rank = int(re.search(r"_r(\d+)_\d+-\d+\.csv$", path).group(1))
        with open(path, newline="") as handle:
            rows = [row for row in csv.DictReader(line for line in handle if not line.startswith("#"))]
        check(rank not in logs, f"one log per rank: {path}")
        logs[rank] = rows
    return logs


def injected_run(name, inject_spec):
    directory = os.path.join(options.directory, name)
    os.makedirs(directory)
    command = [options.tremor_run, "--output-dir", directory, "--report", "text", "--inject", inject_spec,
               options.app, "-n", "60", "-u", "1500", "-S", "-k", "0", "-q"]
    result = mpi_run(options.launcher, 2, command, clean_env, timeout=150)
    check(result.returncode == 0, f"{name}: exit 0, got {result.returncode}: {result.stderr[-2000:]}")
    return directory, result.stderr, inject_logs(directory)


def json_report(directory):
    files = glob.glob(os.path.join(directory, "*.json"))
    check(len(files) == 1, f"one JSON report in {directory}: {files}")
    if not files:
        return {}
    with open(files[0]) as handle:
        return json.load(handle)


def truth_text(stderr):
    """The text report's truth line and its indented continuations, joined, or None."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Planted by the injector:")]
    check(len(starts) <= 1, f"at most one truth line: {starts}")
    if not starts:
        return None
    end = starts[0] + 1
    while end < len(lines) and lines[end].startswith("  ") and not lines[end].strip().startswith("-"):
        end += 1
    return " ".join(" ".join(lines[starts[0]:end]).split())


def check_truth(name, directory, stderr, logs):
    check(sorted(logs) == [0, 1], f"{name}: a delay log per rank, got ranks {sorted(logs)}")
    spent = {rank: sum(float(row["spent_us"]) * 1e-6 for row in rows if float(row["spent_us"]) > 0)
             for rank, rows in logs.items()}
    delays = {rank: sum(1 for row in rows if float(row["spent_us"]) > 0) for rank, rows in logs.items()}
    run_file = single_run_file(directory)
    if not run_file or sorted(logs) != [0, 1]:
        return
    with h5py.File(run_file, "r") as handle:
        injected = handle["ranks/injected_s"][()].tolist()
        queued = handle["ranks/run_queue_delay_s"][()].tolist()
        run_time_s = float(handle.attrs["run_time_s"])
    for rank in (0, 1):
        tolerance = (delays[rank] + 1) * ROUNDING_S_PER_ROW
        check(abs(injected[rank] - spent[rank]) <= tolerance,
              f"{name}: /ranks/injected_s[{rank}] = {injected[rank]!r} is the log's spent total {spent[rank]!r}")
        # The kernel's count grows monotonically: the rank's run-queue delay
        # over the run holds at least what it grew between the first and the
        # last logged call of its (only) thread inside the run's segments
        # (segment -1: Tremor's own start-up traffic, before its baseline).
        seen = [float(row[column]) for row in logs[rank] for column in ("queued_entered_s", "queued_returned_s")
                if row[column] and int(row["segment"]) >= 0]
        logged = max(seen) - min(seen) if seen else 0.0
        check(math.isfinite(queued[rank]) and logged - 1e-6 <= queued[rank] <= run_time_s,
              f"{name}: rank {rank}'s run-queue delay {queued[rank]!r} is the kernel's: at least the {logged!r} s "
              f"its log saw, at most the run time {run_time_s}")

    report = json_report(directory)
    truth = report.get("injector_truth")
    check(isinstance(truth, dict), f"{name}: the JSON report has injector_truth: {sorted(report)}")
    if isinstance(truth, dict):
        for rank in (0, 1):
            tolerance = (delays[rank] + 1) * ROUNDING_S_PER_ROW
            check(abs(truth["injected_s"][rank] - spent[rank]) <= tolerance,
                  f"{name}: injector_truth.injected_s[{rank}] {truth['injected_s'][rank]} = log {spent[rank]}")
            check(truth["machine_run_queue_delay_s"][rank] == queued[rank],
                  f"{name}: injector_truth.machine_run_queue_delay_s[{rank}] is the kernel's {queued[rank]}")
        check(abs(truth["injected_max_s"] - max(spent.values())) <= (sum(delays.values()) + 1) * ROUNDING_S_PER_ROW,
              f"{name}: injected_max_s {truth['injected_max_s']} = the largest log total {max(spent.values())}")
        check(abs(truth["injected_sum_s"] - sum(spent.values())) <= (sum(delays.values()) + 1) * ROUNDING_S_PER_ROW,
              f"{name}: injected_sum_s {truth['injected_sum_s']} = the logs' total {sum(spent.values())}")
    line = truth_text(stderr)
    check(line is not None, f"{name}: the text report has the truth line: {stderr[-1500:]!r}")
    if line is not None:
        largest = max(spent.values())
        figure = re.match(r"Planted by the injector: ([0-9.e+-]+) s on ", line)
        check(figure is not None and abs(float(figure.group(1)) - largest) <= 0.005 * largest,
              f"{name}: the line's figure is the largest log total {largest:.4f} s: {line!r}")
        machine = re.search(r"\(kernel\): ([0-9.e+-]+) s", line)
        check(machine is not None and abs(float(machine.group(1)) - max(queued)) <= 0.005 * max(queued),
              f"{name}: the line's machine share is the kernel's largest run-queue delay {max(queued):.4f} s: {line!r}")
    return spent


shutil.rmtree(options.directory, ignore_errors=True)
os.makedirs(options.directory)
check_names()

# Slowdown and trace only: every delay on rank 1 is the slowdown's; rank 0 is traced, not delayed.
directory, stderr, logs = injected_run("slowdown_trace", "slowdown=0.5,ranks=1,trace=coll")
if sorted(logs) == [0, 1]:
    delayed = {rank: [row for row in rows if float(row["spent_us"]) > 0] for rank, rows in logs.items()}
    check(len(delayed[1]) > 0 and not delayed[0], f"slowdown delays rank 1 only: {len(delayed[0])}, {len(delayed[1])}")
    traced = [row for row in logs[0] if row["call"] == "MPI_Allreduce" and row["sequence"] == "-1"]
    check(len(traced) >= 60, f"trace=coll logs every Allreduce of rank 0 (not eligible): {len(traced)} rows")
spent = check_truth("slowdown_trace", directory, stderr, logs)
if spent:
    check(spent[0] == 0.0 and spent[1] > 0.0, f"slowdown_trace: truth on rank 1 only: {spent}")

# Random delays on both ranks: per-rank totals, their largest and their sum.
directory, stderr, logs = injected_run("both_ranks", "mean=1500,sd=100,p=0.3,calls=coll,seed=3")
spent = check_truth("both_ranks", directory, stderr, logs)
if spent:
    check(spent[0] > 0.0 and spent[1] > 0.0, f"both_ranks: delays on both ranks: {spent}")

# No injector: no truth anywhere.
directory = os.path.join(options.directory, "clean")
os.makedirs(directory)
result = mpi_run(options.launcher, 2, [options.tremor_run, "--output-dir", directory, "--report", "text",
                                       options.app, "-n", "30", "-u", "1500", "-S", "-k", "0", "-q"], clean_env)
check(result.returncode == 0, f"clean: exit 0, got {result.returncode}: {result.stderr[-2000:]}")
check("% of this run" in result.stderr or "Tremor" in result.stderr, "clean: the text report was printed")
check(truth_text(result.stderr) is None, f"clean: no truth line: {result.stderr[-800:]!r}")
check(json_report(directory).get("injector_truth") is None, "clean: injector_truth is null in the JSON report")
run_file = single_run_file(directory)
if run_file:
    with h5py.File(run_file, "r") as handle:
        check(all(math.isnan(value) for value in handle["ranks/injected_s"][()]),
              "clean: /ranks/injected_s is NaN (no injector)")
finish("check_inject_truth")
