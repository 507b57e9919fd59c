#!/usr/bin/env python3
"""Runs one libFuzzer harness and judges what it found.

usage: run_fuzzer.py replay  --harness BIN --inputs DIR... [judge options]
       run_fuzzer.py explore --harness BIN --inputs DIR... --work DIR --artifacts DIR
                             (--runs M --seed S | --seconds N [--seed S]) [judge options] [-- libFuzzer flags]
judge options: [--timeout S] [--hdf5-tool TREMOR --tool-command analyze|compare]

replay: every input (the seed corpus and the regressions, past faults) runs
once; any fault fails, also one inside libhdf5: a known input must pass the
reader's own checks, not only the tool's child process.
explore: fuzzing starts from a fresh copy of the inputs. With --runs and
--seed (the CI) it is deterministic: one process, a fixed number of
executions, no time limit on the whole, no mutations from compared values
(-use_cmp=0: some are addresses), so a commit gets the same verdict on every
machine. With --seconds (scripts/fuzz-long.sh) it runs for that long
from a random seed unless one is given, and the run-file harnesses go on past
faults (fork mode) so that one fault does not end the search.

Judging: without --hdf5-tool any crash, leak, timeout or out-of-memory fails.
With it (the harnesses that read run files), a fault whose innermost frame of
ours is inside libhdf5 (HDF5 1.10 can crash or loop on some corrupted files)
is accepted only if the real tool on that input exits 2 with its clear
message; a fault anywhere else fails.
"""
import argparse
import glob
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile

FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in (\S+))?\s*(.*)$")
# Frames of the sanitizers, libFuzzer and the C library are skipped when
# looking for the innermost frame of interest.
NOISE = ("__interceptor_", "__sanitizer", "__asan", "__ubsan", "__lsan", "fuzzer::", "libc.so", "libstdc++",
         "__libc_", "_start", "malloc", "calloc", "realloc", "operator new", "libclang_rt")
# Faults libFuzzer saves; slow-unit-* files only note slow inputs.
FAULTS = ("crash-", "timeout-", "oom-", "leak-")
# Must match kRunSeparator in fuzz_support.hpp.
RUN_SEPARATOR = b"\0TREMOR-FUZZ-NEXT-RUN\0"
TOOL_MESSAGES = ("not a readable Tremor run file",)


def limits(opts):
    return [f"-timeout={opts.timeout}", "-rss_limit_mb=2048", "-malloc_limit_mb=1024"]


def innermost_frame(report):
    for line in report.splitlines():
        match = FRAME.match(line)
        if not match:
            continue
        function, where = match.group(1) or "", match.group(2)
        text = function + " " + where
        if any(noise in text for noise in NOISE):
            continue
        return text
    return ""


def run_tool(opts, artifact):
    env = dict(os.environ, ASAN_OPTIONS="abort_on_error=1:detect_leaks=0:allocator_may_return_null=1")
    with tempfile.TemporaryDirectory(prefix="tremor-judge-") as scratch:
        if opts.tool_command == "compare":
            with open(artifact, "rb") as handle:
                pieces = handle.read().split(RUN_SEPARATOR)
            files = []
            for i, piece in enumerate(pieces):
                files.append(os.path.join(scratch, f"run{i}.h5"))
                with open(files[-1], "wb") as handle:
                    handle.write(piece)
            command = [opts.hdf5_tool, "compare"] + files
        else:
            command = [opts.hdf5_tool, "analyze", "--read-timeout", "5", artifact]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env,
                              errors="replace")


def judge(opts, artifact):
    """None if the fault is acceptable, else a reason."""
    rerun = subprocess.run([opts.harness] + limits(opts) + [artifact], capture_output=True, text=True,
                           timeout=opts.timeout + 120, errors="replace")
    report = rerun.stdout + rerun.stderr
    if rerun.returncode == 0 and os.path.basename(artifact).startswith("timeout-"):
        # A stalled or overloaded machine, not a slow input: the rerun took under the limit.
        print(f"  {os.path.basename(artifact)}: a timeout that did not recur (rerun within {opts.timeout} s)")
        return None
    if rerun.returncode == 0:
        return f"saved as a fault, but its rerun passed:\n{report[-3000:]}"
    frame = innermost_frame(report)
    if not opts.hdf5_tool or "libhdf5" not in frame:
        return f"fault in our code (innermost frame: {frame or 'none'}):\n{report[-6000:]}"
    tool = run_tool(opts, artifact)
    if tool.returncode != 2 or not any(message in tool.stderr for message in TOOL_MESSAGES):
        return (f"libhdf5 fault ({frame}), but `tremor {opts.tool_command}` exited {tool.returncode} "
                f"with stderr {tool.stderr[-2000:]!r}")
    print(f"  {os.path.basename(artifact)}: inside libhdf5 ({frame.split()[0]}); "
          f"tremor {opts.tool_command}: {tool.stderr.strip().splitlines()[-1]}")
    return None


def input_files(directories):
    files = []
    for directory in directories:
        files += sorted(path for path in glob.glob(os.path.join(directory, "*")) if os.path.isfile(path))
    return files


def replay(opts):
    files = input_files(opts.inputs)
    if not files:
        print("FAILED: no inputs in " + ", ".join(opts.inputs))
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="tremor-replay-") as scratch:
        remaining = files
        while remaining:
            run = subprocess.run([opts.harness] + limits(opts) + [f"-artifact_prefix={scratch}/"] + remaining,
                                 capture_output=True, text=True, timeout=opts.timeout * len(remaining) + 300,
                                 errors="replace")
            if run.returncode == 0:
                break
            started = [line[len("Running: "):] for line in (run.stdout + run.stderr).splitlines()
                       if line.startswith("Running: ")]
            if not started or started[-1] not in remaining:
                print((run.stdout + run.stderr)[-8000:])
                print(f"FAILED: the harness exited {run.returncode} before naming an input")
                return 1
            faulty = started[-1]
            failures.append((faulty, innermost_frame(run.stdout + run.stderr), (run.stdout + run.stderr)[-4000:]))
            remaining = remaining[remaining.index(faulty) + 1:]
    for path, frame, report in failures:
        print(f"{report}\nFAILED {path}: innermost frame {frame or 'unknown'}")
    print(f"{len(files)} input(s) replayed, {len(failures)} fault(s)")
    return 1 if failures else 0


def reproducible_process(harness, scratch):
    """How the CI's exploration runs the harness so that its path depends on
    its input only: coverage feedback from inlined library code sees a few
    stack addresses, so the addresses must not move. Without ASLR (setarch
    -R), the stack's layout follows argv, the environment and the auxiliary
    vector only: the harness runs from a folder of fixed length under /tmp
    (mkdtemp), through a link named `harness`, with relative paths and a
    fixed environment. Returns (command prefix, environment)."""
    os.symlink(os.path.abspath(harness), os.path.join(scratch, "harness"))
    env = {"PATH": "/usr/bin:/bin", "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "allocator_may_return_null=1"),
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
    lsan = os.environ.get("LSAN_OPTIONS", "")
    suppressions = re.search(r"suppressions=([^:]+)", lsan)
    if suppressions:
        shutil.copy(suppressions.group(1), os.path.join(scratch, "lsan.supp"))
        lsan = lsan.replace(suppressions.group(0), "suppressions=lsan.supp")
    env["LSAN_OPTIONS"] = lsan
    prefix = ["setarch", platform.machine(), "-R"] if shutil.which("setarch") else []
    return prefix + ["./harness"], env


def explore(opts, extra):
    shutil.rmtree(opts.work, ignore_errors=True)
    os.makedirs(opts.work)
    shutil.rmtree(opts.artifacts, ignore_errors=True)
    os.makedirs(opts.artifacts)
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(1, 2**31)
    flags = limits(opts) + [f"-seed={seed}", "-reload=0", "-print_final_stats=1"]
    scratch = tempfile.mkdtemp(prefix="tremor-fuzz-", dir="/tmp")
    try:
        if opts.runs is not None:
            # Deterministic: no mutations from compared values either (some
            # are addresses), and everything as reproducible_process says.
            command, env = reproducible_process(opts.harness, scratch)
            work, artifacts_prefix = "work", "artifacts/"
            flags += [f"-runs={opts.runs}", "-use_cmp=0"]
            wall_limit = None
        else:
            command, env = [opts.harness], None
            work, artifacts_prefix = os.path.join(scratch, "work"), os.path.join(scratch, "artifacts") + "/"
            flags.append(f"-max_total_time={opts.seconds}")
            if opts.hdf5_tool:
                flags += ["-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]
            wall_limit = opts.seconds + 900
        # One folder of copies: libFuzzer loads by size, then path.
        os.makedirs(os.path.join(scratch, "work"))
        os.makedirs(os.path.join(scratch, "artifacts"))
        for number, directory in enumerate(opts.inputs):
            for path in input_files([directory]):
                shutil.copy(path, os.path.join(scratch, "work", f"{number}-{os.path.basename(path)}"))
        command += flags + [f"-artifact_prefix={artifacts_prefix}"] + extra + [work]
        print(" ".join(command), flush=True)
        log_path = opts.log or os.path.join(opts.artifacts, "libfuzzer.log")
        with open(log_path, "w") as handle:  # written as it goes: a long run can be watched
            fuzzing = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, timeout=wall_limit,
                                     cwd=scratch, env=env)
        for name in os.listdir(os.path.join(scratch, "work")):
            shutil.copy(os.path.join(scratch, "work", name), opts.work)
        for name in os.listdir(os.path.join(scratch, "artifacts")):
            shutil.copy(os.path.join(scratch, "artifacts", name), opts.artifacts)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with open(log_path, errors="replace") as handle:
        log = handle.read()
    stats = [line for line in log.splitlines() if line.startswith(("stat::", "#", "INFO: fork"))]
    print("\n".join(stats[-6:]))
    artifacts = sorted(path for path in glob.glob(os.path.join(opts.artifacts, "*"))
                       if os.path.basename(path).startswith(FAULTS))
    slow = glob.glob(os.path.join(opts.artifacts, "slow-unit-*"))
    if slow:
        print(f"note: {len(slow)} input(s) slower than libFuzzer's report threshold: {slow}")
    if fuzzing.returncode != 0 and not artifacts:
        print(log[-8000:])
        print(f"FAILED: the fuzzer exited {fuzzing.returncode} and saved no input (seed {seed})")
        return 1
    failures = [(artifact, reason) for artifact in artifacts if (reason := judge(opts, artifact))]
    for artifact, reason in failures:
        print(f"FAILED {artifact}: {reason}")
    print(f"seed {seed}: {len(artifacts)} saved fault(s), {len(failures)} in our code")
    if failures:
        print("A fault fixed in the code joins the regressions: copy it to test/fuzz/regressions/<harness>/.")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["replay", "explore"])
    parser.add_argument("--harness", required=True)
    parser.add_argument("--inputs", nargs="+", required=True)
    parser.add_argument("--work")
    parser.add_argument("--artifacts")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--seconds", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--timeout", type=int, default=30, help="seconds per input before libFuzzer calls it a hang")
    parser.add_argument("--log", help="keep libFuzzer's whole output here")
    parser.add_argument("--hdf5-tool")
    parser.add_argument("--tool-command", choices=["analyze", "compare"], default="analyze")
    opts, extra = parser.parse_known_args()
    extra = [flag for flag in extra if flag != "--"]
    if any(not flag.startswith("-") for flag in extra):
        parser.error(f"unexpected arguments {extra}")
    if opts.mode == "replay":
        return replay(opts)
    if not opts.work or not opts.artifacts or (opts.runs is None) == (opts.seconds is None):
        parser.error("explore needs --work, --artifacts and one of --runs or --seconds")
    if opts.runs is not None and opts.seed is None:
        parser.error("--runs needs --seed: the CI's exploration is deterministic")
    return explore(opts, extra)


if __name__ == "__main__":
    sys.exit(main())
