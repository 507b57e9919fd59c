#!/usr/bin/env python3
"""Runs the rows of hostile_cases.py for one command and checks each one.

usage: run_hostile.py --command analyze|compare|plot|fit|predict|config --tremor TOOL --data DIR
       run_hostile.py --command profiler --launcher CMD --preload LIB --injector LIB -- PROGRAM ARGS...

Every row of the offline commands must: exit with its status within the time
limit (a FIFO must not hang); print its message fragment on stderr, as one
line (an error) and without a Python traceback; print no report on stdout when
it fails and no nan or inf in a report when it succeeds; leave every input
byte-identical; leave no temporary file in the output directory. Rows with a
check also pass that predicate. The profiler rows must leave the
application's stdout and exit status as without Tremor and print the message
once. The inputs are built from the committed runs in test/data (2 MPICH
processes of bsp_demo).
"""
import argparse
import glob
import gzip
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

import hostile_cases as table

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
TIME_LIMIT_S = 120
FSIZE_LIMIT = 1024  # bytes: every page is larger, so its write fails (EFBIG) as on a full disk
NAN_OR_INF = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w])", re.IGNORECASE)


def unpack(data_dir, name, target):
    with gzip.open(os.path.join(data_dir, name + ".h5.gz"), "rb") as packed, open(target, "wb") as out:
        shutil.copyfileobj(packed, out)
    return target


def tampered(valid, path, edit):
    shutil.copyfile(valid, path)
    with h5py.File(path, "r+") as handle:
        edit(handle)
    return path


def set_value(dataset, index, value):
    def edit(handle):
        values = handle[dataset][()]
        values[index] = value
        handle[dataset][...] = values
    return edit


def set_attribute(name, value):
    def edit(handle):
        handle.attrs.modify(name, value)
    return edit


def flip_object_header_byte(valid, path):
    """A byte of /counter_events' object header, which HDF5 protects with a checksum."""
    with h5py.File(valid, "r") as handle:
        address = h5py.h5o.get_info(handle["counter_events"].id).addr
    data = bytearray(open(valid, "rb").read())
    if data[address:address + 4] != b"OHDR":
        sys.exit(f"expected a version 2 object header at {address} of {valid}")
    data[address + 8] ^= 0x01
    open(path, "wb").write(bytes(data))
    return path


def run_file_inputs(valid, scratch):
    """Every input of table.RUN_FILE_CASES, by name."""
    made = {}
    path = lambda name: os.path.join(scratch, name + ".h5")  # noqa: E731
    made["missing"] = path("missing")
    made["directory"] = os.path.join(scratch, "a-directory.h5")
    os.mkdir(made["directory"])
    made["fifo"] = path("fifo")
    os.mkfifo(made["fifo"])
    made["dev_zero"] = "/dev/zero"
    made["empty_file"] = path("empty_file")
    open(made["empty_file"], "wb").close()
    made["text_file"] = path("text_file")
    open(made["text_file"], "w").write("not a run file\n")
    made["huge_sparse_file"] = path("huge_sparse_file")
    with open(made["huge_sparse_file"], "wb") as out:
        out.truncate(4 << 30)
    made["truncated"] = path("truncated")
    open(made["truncated"], "wb").write(open(valid, "rb").read()[:20000])
    made["flipped_header_byte"] = flip_object_header_byte(valid, path("flipped_header_byte"))
    made["not_a_run_file"] = path("not_a_run_file")
    with h5py.File(made["not_a_run_file"], "w") as handle:
        handle["segments"] = np.zeros(3)
    edits = {
        "schema_version_99": set_attribute("schema_version", 99),
        "world_size_0": set_attribute("world_size", 0),
        "node_count_0": set_attribute("node_count", 0),
        "negative_run_time": set_attribute("run_time_s", -5.0),
        "nan_start_time": set_attribute("start_time_unix", float("nan")),
        "no_detail": lambda handle: handle.__delitem__("detail"),
        "nan_duration": set_value("segments/duration_s", 7, float("nan")),
        "inf_duration": set_value("segments/duration_s", 7, float("inf")),
        "negative_duration": set_value("segments/duration_s", 7, -0.25),
        "nan_upper_duration": set_value("segments/duration_upper_s", 3, float("nan")),
        "negative_io_time": set_value("segments/io_time_s", 2, -1.0),
        "inf_bin": set_value("bins/duration/value", 0, float("inf")),
        "negative_bin": set_value("bins/mpi_time/value", 1, -3.0),
        "late_rank_12345": set_value("segments/late_rank", 5, 12345),
        "closing_call_out_of_range": set_value("segments/closing_call", 4, 60000),
        "node_id_minus_1": set_value("ranks/node_id", 1, -1),
        "rank_ids_swapped": lambda handle: handle["ranks/rank"].__setitem__(Ellipsis, [1, 0]),
        "detail_rank_out_of_range": set_value("detail/ranks", 1, 7),
        "negative_run_queue_delay": set_value("ranks/run_queue_delay_s", 0, -2.0),
        "nan_total": set_value("totals/io_time", 1, float("nan")),
        "valid_copy": lambda handle: None,
    }
    for name, edit in edits.items():
        made[name] = tampered(valid, path(name), edit)
    return made


def named_inputs(options, scratch):
    """The placeholders of table.CASES."""
    runs = os.path.join(scratch, "runs")
    out = os.path.join(scratch, "out")
    os.makedirs(runs)
    os.makedirs(out)
    names = {"out": out}
    names["run"] = unpack(options.data, "slow_machine/clean-0", os.path.join(runs, "clean-0.h5"))
    names["run2"] = unpack(options.data, "slow_machine/clean-1", os.path.join(runs, "clean-1.h5"))
    names["io_run"] = unpack(options.data, "slow_machine/io_clean-0", os.path.join(runs, "io_clean-0.h5"))
    names["other_program"] = tampered(names["run2"], os.path.join(runs, "other-program.h5"),
                                      set_attribute("command_line", "/usr/bin/other_app -n 400"))
    names["fifo"] = os.path.join(scratch, "fifo")
    os.mkfifo(names["fifo"])
    names["foreign"] = os.path.join(scratch, "notes.html")
    open(names["foreign"], "w").write("<html>the user's own page</html>\n")
    names["foreign_png_dir"] = os.path.join(scratch, "pngs")
    os.makedirs(names["foreign_png_dir"])
    open(os.path.join(names["foreign_png_dir"], "timeline.png"), "wb").write(b"\x89PNG\r\n\x1a\n the user's own")
    beside = os.path.join(scratch, "beside")
    os.makedirs(beside)
    names["run_beside_page"] = shutil.copy(names["run"], os.path.join(beside, "run.h5"))
    open(os.path.join(beside, "run.html"), "w").write("<html>an earlier page</html>\n")
    names["own_page"] = os.path.join(scratch, "own-page.html")
    names["own_compare_page"] = os.path.join(scratch, "own-compare.html")
    names["sample"] = os.path.join(SOURCE, "test", "estimators", "data", "gumbel_n15.txt")
    names["huge_sample"] = os.path.join(scratch, "huge.txt")
    open(names["huge_sample"], "w").write("".join(f"{v}e308\n" for v in (1.0, 1.5, 1.2, 1.7, 1.1, 1.3, 1.05)))
    names["nul_sample"] = os.path.join(scratch, "nul.txt")
    with open(names["nul_sample"], "wb") as stream:
        stream.write(b"\0" * (1 << 20))
    names["big_config"] = os.path.join(scratch, "big.conf")
    with open(names["big_config"], "w") as stream:
        stream.write("# padding\n" * 120000)
    return names


def digest(path):
    """The content's hash; size and modification time alone for the huge sparse input."""
    if not os.path.isfile(path):
        return None
    status = os.stat(path)
    if status.st_size > 64 << 20:
        return (status.st_size, status.st_mtime_ns)
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


def command_line(options, command, arguments):
    if command == "plot":
        return [options.tremor, "plot"] + arguments
    return [options.tremor, command] + arguments


class Checker:
    def __init__(self):
        self.failures = []
        self.count = 0

    def case(self, label, problems, seconds=None):
        self.count += 1
        took = f" ({seconds:.1f} s)" if seconds is not None else ""
        if problems:
            self.failures.append(label)
            print(f"FAILED {label}{took}: " + "; ".join(problems))
        else:
            print(f"ok     {label}{took}")


def run_one(options, names, command, arguments_text, status, fragment, check_name=None):
    """Problems of one row (empty when it behaves)."""
    fsize = "[fsize]" in arguments_text
    no_tremor = "[no tremor]" in arguments_text
    text = arguments_text.replace("[fsize]", "").replace("[no tremor]", "").format(**names)
    arguments = shlex.split(text)
    argv = command_line(options, command, arguments)
    environment = dict(os.environ, LC_ALL="C")
    if no_tremor:  # the Python program alone, no tremor tool anywhere
        argv = [sys.executable, "-m", "tremor_plot"] + arguments
        environment.update(PYTHONPATH=os.path.join(SOURCE, "scripts"), TREMOR_PLOT_TOOL="", PATH="/usr/bin:/bin")
    shown = " ".join(shlex.quote(a) for a in argv[1:])
    if check_name == "page_replaced":  # an earlier page of this command
        earlier = subprocess.run(argv, capture_output=True, text=True, timeout=TIME_LIMIT_S, env=environment)
        if earlier.returncode != 0:
            return [f"could not write the earlier page: {earlier.stderr.strip()}"], shown
    page_targets = {names["own_page"], names["own_compare_page"]}
    watched = [value for key, value in names.items()
               if key != "out" and os.path.isfile(value) and value not in page_targets]
    before = {path: digest(path) for path in watched}
    try:
        result = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=TIME_LIMIT_S,
                                env=environment, preexec_fn=limit_file_size if fsize else None,
                                stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [f"did not finish within {TIME_LIMIT_S} s (hangs?)"], shown
    problems = []
    if result.returncode != status:
        problems.append(f"exit {result.returncode}, expected {status}")
    if fragment and fragment not in result.stderr:
        problems.append(f"stderr lacks {fragment!r}")
    if "Traceback" in result.stderr:
        problems.append("a Python traceback")
    if status != 0:
        errors = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("Run with")
                  and not line.startswith("usage:") and not line.startswith("  ")]
        if len(errors) != 1:
            problems.append(f"{len(errors)} message lines, expected one")
        if result.stdout.strip() and command != "config":
            problems.append("a report on stdout despite the failure")
    elif NAN_OR_INF.search(result.stdout):
        problems.append(f"nan or inf in the report: {NAN_OR_INF.search(result.stdout).group(0)!r}")
    for path, old in before.items():
        if digest(path) != old:
            problems.append(f"input {path} was changed")
    leftovers = [p for p in glob.glob(os.path.join(names["out"], ".*")) + glob.glob(os.path.join(names["out"], "*"))
                 if os.path.basename(p).startswith(".")]
    if leftovers:
        problems.append(f"temporary files left: {leftovers}")
        for leftover in leftovers:
            os.remove(leftover)
    if check_name and not problems:
        problem = CHECKS[check_name](result, names, arguments)
        if problem:
            problems.append(problem)
    return problems, shown


def report_without_nan(result, names, arguments):
    return "" if "Run:" in result.stdout else "no report printed"


def run_time_bounds_non_negative(result, names, arguments):
    report = json.loads(result.stdout)
    predictions = report.get("predictions") or []
    if not predictions:
        return "no predictions in the JSON report"
    for prediction in predictions:
        if not 0.0 <= prediction["ci_low_s"] <= prediction["median_s"] <= prediction["ci_high_s"]:
            return f"{prediction['method']}: interval {prediction['ci_low_s']}..{prediction['ci_high_s']} " \
                   f"around {prediction['median_s']} is not 0 <= low <= median <= high"
    return ""


def compare_has_two_runs(result, names, arguments):
    stems = [os.path.splitext(os.path.basename(names[key]))[0] for key in ("run", "run2")]
    missing = [stem for stem in stems if stem not in result.stdout]
    return f"runs {missing} not compared (taken as --scales values?)" if missing else ""


def page_replaced(result, names, arguments):
    page = arguments[arguments.index("--html" if "--html" in arguments else "-o") + 1]
    content = open(page, encoding="utf-8").read()
    return "" if content.startswith("<!DOCTYPE html>") and "generator" in content else "the page was not rewritten"


def nothing_half_written(result, names, arguments):
    page = arguments[arguments.index("--html" if "--html" in arguments else "-o") + 1]
    return f"{page} exists after a failed write" if os.path.exists(page) else ""


def different_program_no_verdict(result, names, arguments):
    if "Warning: other-program is a run of another program than clean-0 (other_app, not bsp_demo)" \
            not in result.stdout:
        return "no warning that the programs differ"
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("Verdict:")]
    if len(verdicts) != 1 or not verdicts[0].startswith("Verdict: no verdict:"):
        return f"an intrinsic verdict for another program: {verdicts}"
    return ""


def same_program_verdict(result, names, arguments):
    if "Warning:" in result.stdout:
        return "a warning for two runs of one program"
    verdicts = [line for line in result.stdout.splitlines() if line.startswith("Verdict:")]
    return "" if verdicts and "no verdict" not in verdicts[0] else f"no verdict: {verdicts}"


def predict_median_inside(result, names, arguments):
    lines = [line for line in result.stdout.splitlines() if line.startswith("scale ")]
    if not lines:
        return "no prediction printed"
    for line in lines:
        match = re.match(r"scale \S+: median (\S+)  CI \[(\S+), (\S+)\]", line)
        if not match:
            return f"unexpected line {line!r}"
        median, low, high = (float(value) for value in match.groups())
        if not (np.isfinite([median, low, high]).all() and low <= median <= high):
            return f"median outside its interval or not finite: {line!r}"
    return ""


CHECKS = {function.__name__: function for function in (
    report_without_nan, run_time_bounds_non_negative, compare_has_two_runs, page_replaced, nothing_half_written,
    different_program_no_verdict, same_program_verdict, predict_median_inside)}


def run_file_rows(command):
    """table.RUN_FILE_CASES as rows of `command`."""
    forms = {
        "analyze": ["{input}", "{input} --json", "--check {input}"],
        "compare": ["{run} {input} --replicas 20", "{input} {run} --replicas 20"],
        "plot": ["{input} -o {out}/page.html"],
    }.get(command, [])
    for name, status, fragment in table.RUN_FILE_CASES:
        for form in forms:
            yield name, form, status, fragment


def check_exit_code_tables(options, checker):
    """hostile_cases' and tremor-plot's statuses are those of the tool's enum, name by name, and the
    tool prints that enum as its table."""
    header = open(os.path.join(SOURCE, "estimators", "cli", "exit_codes.hpp"), encoding="utf-8").read()
    enum = header[header.index("enum class Exit"):]
    enum = dict((name, int(value)) for name, value in re.findall(r"(\w+) = (\d+),", enum[:enum.index("};")]))
    markdown = subprocess.run([options.tremor, "config", "--markdown", "exit-codes"], capture_output=True,
                              text=True).stdout
    printed = sorted(int(m.group(1)) for m in re.finditer(r"^\| (\d+) \|", markdown, re.MULTILINE))
    sys.path.insert(0, os.path.join(SOURCE, "scripts"))
    from tremor_plot import exit_codes as plot_codes
    ours = {"ok": table.OK, "usage": table.USAGE, "bad_input": table.BAD_INPUT, "gate": table.GATE,
            "output": table.OUTPUT}
    plot = {"ok": plot_codes.OK, "usage": plot_codes.USAGE, "bad_input": plot_codes.BAD_INPUT,
            "output": plot_codes.OUTPUT, "internal": plot_codes.INTERNAL,
            "missing_program": plot_codes.MISSING_PROGRAM}
    problems = []
    if printed != sorted(enum.values()):
        problems.append(f"tremor config --markdown exit-codes lists {printed}, the enum {enum}")
    for who, codes in (("hostile_cases", ours), ("tremor_plot/exit_codes.py", plot)):
        wrong = {name: value for name, value in codes.items() if enum.get(name) != value}
        if wrong:
            problems.append(f"{who}: {wrong} differ from Exit in exit_codes.hpp {enum}")
    checker.case("exit status tables agree", problems)


def run_offline(options):
    checker = Checker()
    with tempfile.TemporaryDirectory(prefix="tremor-hostile-") as scratch:
        names = named_inputs(options, scratch)
        os.makedirs(os.path.join(scratch, "inputs"))
        inputs = run_file_inputs(names["run"], os.path.join(scratch, "inputs"))
        if options.command == "analyze":
            check_exit_code_tables(options, checker)
        for name, form, status, fragment in run_file_rows(options.command):
            row_names = dict(names, input=inputs[name])
            started = time.monotonic()
            problems, shown = run_one(options, row_names, options.command, form, status, fragment)
            checker.case(f"{options.command} {shown} [{name}]", problems, time.monotonic() - started)
            page = os.path.join(names["out"], "page.html")
            if os.path.exists(page):
                if status != 0:
                    checker.case(f"{options.command} {name}: no page for a rejected file", ["a page was written"])
                os.remove(page)
        for row in table.CASES:
            command, arguments, status, fragment = row[:4]
            if command != options.command:
                continue
            started = time.monotonic()
            problems, shown = run_one(options, names, command, arguments, status, fragment,
                                      row[4] if len(row) > 4 else None)
            checker.case(f"{command} {shown}", problems, time.monotonic() - started)
    print(f"{checker.count - len(checker.failures)} passed, {len(checker.failures)} failed")
    return 1 if checker.failures else 0


def run_profiler(options):
    """table.SETTINGS_CASES in a real 2-process run."""
    sys.path.insert(0, os.path.join(SOURCE, "test", "integration"))
    from launch import environment_without_tremor, mpi_command, run_preloaded
    command = mpi_command(options.launcher, 2, options.program)
    base = environment_without_tremor()
    baseline = run_preloaded(command, base, timeout=TIME_LIMIT_S)
    checker = Checker()
    with tempfile.TemporaryDirectory(prefix="tremor-hostile-settings-") as scratch:
        out = os.path.join(scratch, "out")
        os.makedirs(out)
        names = {"out": out, "fifo": os.path.join(scratch, "settings.fifo"),
                 "big_config": os.path.join(scratch, "big.conf")}
        os.mkfifo(names["fifo"])
        with open(names["big_config"], "w") as stream:
            stream.write("# padding\n" * 120000)
        for settings, fragment, with_injector in table.SETTINGS_CASES:
            preload = options.preload + (" " + options.injector if with_injector else "")
            environment = dict(base, LD_PRELOAD=preload, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none",
                               TREMOR_COUNTERS="cputime")
            environment.update({name: value.format(**names) for name, value in settings.items()})
            label = " ".join(f"{name}={value.format(**names)}" for name, value in settings.items())
            problems = []
            try:
                result = run_preloaded(command, environment, timeout=TIME_LIMIT_S)
            except subprocess.TimeoutExpired:
                checker.case(label, [f"the application did not finish within {TIME_LIMIT_S} s"])
                continue
            if (result.stdout, result.returncode) != (baseline.stdout, baseline.returncode):
                problems.append(f"the application changed: exit {result.returncode} vs {baseline.returncode}")
            expected = fragment.format(**names)
            mentions = [line for line in result.stderr.splitlines() if expected in line]
            if len(mentions) != 1:
                problems.append(f"expected one message with {expected!r}, got {len(mentions)}: "
                                f"{result.stderr.strip()[-400:]!r}")
            logs = glob.glob(os.path.join(out, "tremor-inject_*"))
            if with_injector and logs:
                problems.append(f"delay logs written although injection is off: {logs}")
            for log in logs:
                os.remove(log)
            checker.case(label, problems)
    print(f"{checker.count - len(checker.failures)} passed, {len(checker.failures)} failed")
    return 1 if checker.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--command", required=True)
    parser.add_argument("--tremor")
    parser.add_argument("--data", default=os.path.join(SOURCE, "test", "data"))
    parser.add_argument("--launcher")
    parser.add_argument("--preload")
    parser.add_argument("--injector")
    parser.add_argument("program", nargs="*")
    options = parser.parse_args()
    if options.command == "profiler":
        return run_profiler(options)
    return run_offline(options)


if __name__ == "__main__":
    sys.exit(main())
