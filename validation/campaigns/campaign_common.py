"""Shared pieces of the validation campaigns: interpreter, runs, output files.

The campaigns need numpy, h5py and matplotlib, which Debian's /usr/bin/python3
has and the first python3 on PATH may not: `ensure_debian_python()` re-executes
the calling script under /usr/bin/python3 when the imports fail.
"""
import glob
import gzip
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import machine_load

DEBIAN_PYTHON = "/usr/bin/python3"
# What the machine took from a run's ranks (JSON, not named *.json: one report per folder).
MACHINE_LOAD_FILE = "machine_load.txt"


def ensure_debian_python():
    try:
        import h5py  # noqa: F401
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON) and os.path.exists(DEBIAN_PYTHON):
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
        raise


REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def portable_paths(value):
    """The campaign's settings with paths inside the repository made relative to its root, so a
    committed campaign.json names no path of the machine that ran it."""
    if isinstance(value, str):
        return value.replace(REPOSITORY + os.sep, "")
    if isinstance(value, list):
        return [portable_paths(item) for item in value]
    if isinstance(value, dict):
        return {key: portable_paths(item) for key, item in value.items()}
    return value


# A small run file kept in the repository: every report carries the classification.
SAMPLE_RUN = os.path.join(REPOSITORY, "test", "data", "slow_machine", "clean_long-0.h5.gz")


class Scoring:
    """Tremor's class limits and its logistic p(high) (docs/statistics.md#classification), read
    from the `classification` block of a report (`tremor analyze --json`), so the campaigns class
    and score a truth exactly as Tremor classes its estimate."""

    def __init__(self, classification):
        self.medium_from = float(classification["medium_from_percent"])
        self.high_above = float(classification["high_above_percent"])
        self.steepness = float(classification["logistic_steepness"])
        self.midpoint = float(classification["logistic_midpoint_percent"])

    @classmethod
    def of_report(cls, report):
        if "classification" not in report:
            raise RuntimeError("the report has no classification block: analyse with this build's tremor")
        return cls(report["classification"])

    @classmethod
    def of_tremor(cls, tremor):
        """From `tremor analyze --json` of SAMPLE_RUN, for scripts that score tables without a report."""
        with tempfile.TemporaryDirectory(prefix="tremor-scoring-") as folder:
            path = os.path.join(folder, "run.h5")
            with gzip.open(SAMPLE_RUN) as packed, open(path, "wb") as unpacked:
                shutil.copyfileobj(packed, unpacked)
            printed = subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True,
                                     check=True).stdout
        return cls.of_report(json.loads(printed))

    def __eq__(self, other):
        return isinstance(other, Scoring) and vars(self) == vars(other)

    def probability_high(self, percent):
        """Logistic p(high), evaluated without overflow."""
        z = -self.steepness * (percent - self.midpoint)
        if z <= 0:
            return 1.0 / (1.0 + math.exp(z))
        e = math.exp(-z)
        return e / (1.0 + e)

    def accuracy(self, truth_percent, estimate_percent):
        """1 − |p(truth) − p(estimate)|: the campaigns' accuracy of an estimate."""
        return 1.0 - abs(self.probability_high(truth_percent) - self.probability_high(estimate_percent))

    def interference_class(self, percent):
        if percent < self.medium_from:
            return "low"
        return "high" if percent > self.high_above else "medium"


def program_names(command):
    """The names the ranks' processes may carry: the command's own and, where it
    is a wrapper that execs another (run-in-deck.sh DECK [env K=V] PROGRAM ...),
    every later word that could name a program (not an option, an assignment
    or a folder). A process is sampled while its name is one of them."""
    words = [command[0]] + [w for w in command[1:]
                            if not w.startswith("-") and "=" not in w and not os.path.isdir(w)]
    return list(dict.fromkeys(words))


def run_under_launcher(launcher, ranks, preload, command, env_extra, output_dir, timeout_s):
    """Runs `launcher -n ranks command` with the libraries preloaded.

    Returns (wall seconds, h5 path, json path). Tremor and the injector write
    into output_dir, which must be fresh so exactly one run file lands there;
    machine_load.txt (JSON) beside them holds what the machine took from the ranks
    meanwhile (read_machine_load), or why it could not be measured.
    """
    os.makedirs(output_dir, exist_ok=True)
    env = dict(os.environ)
    env.update(env_extra)
    env["LD_PRELOAD"] = preload
    env["TREMOR_OUTPUT_DIR"] = output_dir
    env["TREMOR_REPORT"] = "none"
    env.setdefault("TREMOR_LOG_LEVEL", "warn")
    argv = shlex.split(launcher) + ["-n", str(ranks)] + list(command)
    start = time.monotonic()
    result, load = machine_load.run_measured(argv, env, timeout_s, program_names(command))
    wall = time.monotonic() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}:\n{result.stderr[-2000:]}")
    h5_files = sorted(glob.glob(os.path.join(output_dir, "*.h5")))
    json_files = sorted(glob.glob(os.path.join(output_dir, "*.json")))
    if len(h5_files) != 1 or len(json_files) != 1:
        raise RuntimeError(f"expected one .h5 and one .json in {output_dir}, found {h5_files} {json_files}")
    with open(os.path.join(output_dir, MACHINE_LOAD_FILE), "w") as handle:
        json.dump(load.record(), handle)  # {"error": why} where the count is incomplete
    return wall, h5_files[0], json_files[0]


def read_machine_load(output_dir, run_time_s):
    """What the machine took from the ranks of the run in output_dir, % of run_time_s
    (the kernel's run-queue delay of their threads plus steal). Fails closed: a
    missing or unreadable record, one that says the count is incomplete, no
    process sampled or a figure that is not a finite non-negative number raise
    machine_load.MachineLoadError."""
    path = os.path.join(output_dir, MACHINE_LOAD_FILE)
    try:
        with open(path) as handle:
            load = json.load(handle)
    except (OSError, ValueError) as error:
        raise machine_load.MachineLoadError(f"{path}: {error}") from None
    if not isinstance(load, dict):
        raise machine_load.MachineLoadError(f"{path}: not a record: {load!r}")
    if "error" in load:
        raise machine_load.MachineLoadError(f"{path}: not measured: {load['error']}")
    try:
        figures = {key: float(load[key]) for key in ("run_queue_s", "steal_s", "processes")}
        run_time_s = float(run_time_s)
    except (KeyError, TypeError, ValueError) as error:
        raise machine_load.MachineLoadError(f"{path}: {error!r} in {load!r}") from None
    if not all(math.isfinite(v) and v >= 0 for v in figures.values()):
        raise machine_load.MachineLoadError(f"{path}: figures not finite and non-negative: {load!r}")
    if figures["processes"] < 1:
        raise machine_load.MachineLoadError(f"{path}: no process of the run was sampled")
    if not (math.isfinite(run_time_s) and run_time_s > 0):
        raise machine_load.MachineLoadError(f"{path}: a run time of {run_time_s} s")
    return 100.0 * (figures["run_queue_s"] + figures["steal_s"]) / run_time_s


def read_report(json_path):
    with open(json_path) as handle:
        return json.load(handle)


def write_csv(path, rows, columns):
    import csv
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: format_cell(row.get(k)) for k in columns})


def format_cell(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.9g}"
    if isinstance(value, bool):
        return "1" if value else "0"
    return "" if value is None else value


def write_markdown_table(path, title, rows, columns, notes=()):
    lines = [f"# {title}", ""]
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "---|" * len(columns))
    for row in rows:
        lines.append("| " + " | ".join(markdown_cell(row.get(c)) for c in columns) + " |")
    lines += [""] + [f"{note}" for note in notes]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def markdown_cell(value):
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3g}"
    return str(value)
