#!/usr/bin/env python3
"""Bytes that are not UTF-8 in everything of an MPI run that Tremor records
and reports never harm the application nor make invalid JSON.

usage: hostile_strings.py --launcher CMD --np N --preload LIB --tremor TREMOR -- PROGRAM ARGS...

The program runs under a name holding such bytes, with an argument, an
OMP_* variable (recorded in /environment), TREMOR_OUTPUT_DIR and, where this
process may make a UTS namespace (root, as in CI) and the launcher accepts
it (Open MPI's refuses such a node name), the host name holding them too.
Checked: stdout and exit status equal those of the same run without Tremor;
no "analysis failed"; the JSON report beside the run file, its copy in
/analysis/report_json and `tremor analyze --json` / `tremor compare
--json` of the run file are valid UTF-8 JSON (Python's json.loads), and the
report's output_file shows U+FFFD where the bytes were. The run file keeps
the bytes as they were (the premise of the test).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, preloaded

INVALID = b"\xff\xfe\xc3("  # a lone byte, another, a lead byte without its continuation
HOST = b"node" + INVALID
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("CHECK FAILED: " + message)


def text(raw):
    """Bytes as os functions and subprocess take them (surrogateescape)."""
    return os.fsdecode(raw)


def in_uts_namespace(command):
    """COMMAND run with HOST as the host name, or None where no UTS namespace can be made."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return None
    setter = "import os, socket, sys; socket.sethostname(sys.argv[1].encode('utf-8', 'surrogateescape')); " \
             "os.execvp(sys.argv[2], sys.argv[2:])"
    probe = subprocess.run(["unshare", "--uts", sys.executable, "-c", setter, text(HOST), "true"],
                           capture_output=True)
    if probe.returncode != 0:
        print(f"note: no UTS namespace here ({probe.stderr.decode(errors='replace').strip()}); host name not tested")
        return None
    return ["unshare", "--uts", sys.executable, "-c", setter, text(HOST)] + command


def run(command, env):
    command, env = preloaded(command, env)
    return subprocess.run(command, env=env, capture_output=True, timeout=300)


def strict_json(raw, what):
    """Parses bytes as UTF-8 JSON; None (and a failure) if they are not."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        check(False, f"{what} is not valid UTF-8 JSON: {error}; {raw[:300]!r}")
        return None


def main():
    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    parser.add_argument("--tremor", required=True)
    opts = parser.parse_args()
    program = launched_program(opts)
    with tempfile.TemporaryDirectory(prefix="tremor-utf8-") as scratch:
        renamed = os.path.join(scratch, text(b"app" + INVALID))
        shutil.copy(program[0], renamed)
        out = os.path.join(scratch, text(b"out" + INVALID))
        os.mkdir(out)
        command = mpi_command(opts.launcher, opts.np, [renamed] + program[1:] + [text(b"operand" + INVALID)])
        base = dict(environment_without_tremor(), OMP_TREMOR_TEST=text(b"value" + INVALID))
        hosted = in_uts_namespace(command)
        plain = run(hosted or command, base)
        if hosted and plain.returncode != 0:
            # Open MPI's launcher refuses such a host name itself (its node-name
            # regex), without Tremor: the host name is not this test's to check there.
            print(f"note: the launcher alone fails under host name {HOST!r} (exit {plain.returncode}); "
                  "host name not tested with this MPI")
            hosted = None
            plain = run(command, base)
        command = hosted or command
        loaded = run(command, dict(base, LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="json"))
        check((plain.stdout, plain.returncode) == (loaded.stdout, loaded.returncode),
              f"output/exit changed: {plain.stdout!r}/{plain.returncode} vs {loaded.stdout!r}/{loaded.returncode}")
        check(b"analysis failed" not in loaded.stderr, f"the analysis failed: {loaded.stderr[-2000:]!r}")
        runs = glob.glob(os.path.join(out, "*.h5"))
        reports = glob.glob(os.path.join(out, "*.json"))
        if len(runs) != 1 or len(reports) != 1:
            check(False, f"expected one run file and one JSON report, found {runs + reports}; "
                         f"stderr {loaded.stderr[-2000:]!r}")
            return finish()
        report = strict_json(open(reports[0], "rb").read(), "the JSON report")
        if report is not None:
            check("\ufffd" in report["output_file"], f"output_file {report['output_file']!r} has no U+FFFD")
        with h5py.File(runs[0], "r") as f:
            if "analysis/report_json" in f:
                stored = strict_json(f["analysis/report_json"][()], "/analysis/report_json")
                check(stored == report, "/analysis/report_json differs from the JSON report")
            else:
                check(False, "no /analysis/report_json in the run file")
            # The premise: the bytes reached the run file unchanged.
            check(INVALID in bytes(f.attrs["command_line"]), f"command line {f.attrs['command_line']!r}")
            check(any(INVALID in value for value in f["environment/variables/value"][()]),
                  "OMP_TREMOR_TEST's value not recorded")
            if hosted:
                check(all(bytes(host) == HOST for host in f["ranks/hostname"][()]),
                      f"host names {list(f['ranks/hostname'][()])}")
        for arguments in (["analyze", "--json", runs[0]], ["compare", "--json", runs[0], runs[0]]):
            tool = subprocess.run([opts.tremor] + arguments, capture_output=True, timeout=300)
            check(tool.returncode == 0, f"tremor {arguments[0]} exited {tool.returncode}: {tool.stderr[-2000:]!r}")
            strict_json(tool.stdout, f"tremor {arguments[0]} --json")
        print(f"ran as {os.path.basename(renamed)!r} with host name {HOST if hosted else 'unchanged'}")
    return finish()


def finish():
    print("hostile strings: " + ("1 passed, 0 failed" if not failures else "0 passed, 1 failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
