#!/usr/bin/env python3
"""Runs one libFuzzer harness for a bounded time and judges what it found.

usage: run_fuzzer.py --harness BIN --seconds N --seeds DIR --work DIR --artifacts DIR
                     [--hdf5-tool TREMOR] [-- extra libFuzzer flags]
Without --hdf5-tool, any crash, leak, timeout or out-of-memory fails the test.
With it (the run-file harness), fuzzing continues past faults (fork mode) and
each saved input is re-run: a fault whose innermost frame of ours is inside
libhdf5 (HDF5 1.10 crashes and loops on some corrupted files) is acceptable
only if `tremor analyze` on that input exits 2 with a clear message; a fault
anywhere else fails the test.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in (\S+))?\s*(.*)$")
# Frames of the sanitizers, libFuzzer and the C library are skipped when
# looking for the innermost frame of interest.
NOISE = ("__interceptor_", "__sanitizer", "__asan", "__ubsan", "__lsan", "fuzzer::", "libc.so", "libstdc++",
         "__libc_", "_start", "malloc", "calloc", "realloc", "operator new", "libclang_rt")


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


def judge(opts, artifact):
    """None if the fault is acceptable, else a reason."""
    rerun = subprocess.run([opts.harness, "-timeout=10", "-rss_limit_mb=2048", "-malloc_limit_mb=1024", artifact],
                           capture_output=True, text=True, timeout=120)
    report = rerun.stdout + rerun.stderr
    frame = innermost_frame(report)
    if "libhdf5" not in frame:
        return f"fault outside libhdf5 (innermost frame: {frame or 'none'}):\n{report[-6000:]}"
    env = dict(os.environ, ASAN_OPTIONS="abort_on_error=1:detect_leaks=0:allocator_may_return_null=1")
    tool = subprocess.run([opts.hdf5_tool, "analyze", "--read-timeout", "5", artifact], capture_output=True,
                          text=True, timeout=120, env=env)
    if tool.returncode != 2 or "not a readable Tremor run file" not in tool.stderr:
        return (f"libhdf5 fault ({frame}), but `tremor analyze` exited {tool.returncode} "
                f"with stderr {tool.stderr[-2000:]!r}")
    print(f"  {os.path.basename(artifact)}: inside libhdf5 ({frame.split()[0]}); "
          f"tremor analyze: {tool.stderr.strip().splitlines()[-1]}")
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--harness", required=True)
    parser.add_argument("--seconds", type=int, required=True)
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--hdf5-tool")
    parser.add_argument("extra", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    extra = opts.extra[1:] if opts.extra[:1] == ["--"] else opts.extra
    os.makedirs(opts.work, exist_ok=True)
    os.makedirs(opts.artifacts, exist_ok=True)
    for old in glob.glob(os.path.join(opts.artifacts, "*")):
        os.remove(old)
    command = [opts.harness, f"-max_total_time={opts.seconds}", "-rss_limit_mb=2048", "-malloc_limit_mb=1024",
               "-timeout=5", "-print_final_stats=1", f"-artifact_prefix={opts.artifacts}/"] + extra
    if opts.hdf5_tool:
        command += ["-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]
    command += [opts.work, opts.seeds]
    print(" ".join(command), flush=True)
    fuzzing = subprocess.run(command, capture_output=True, text=True, timeout=opts.seconds + 600)
    log = fuzzing.stdout + fuzzing.stderr
    stats = [line for line in log.splitlines() if line.startswith(("stat::number_of_executed_units", "#"))]
    print("\n".join(stats[-3:]))
    artifacts = sorted(glob.glob(os.path.join(opts.artifacts, "*")))
    if not opts.hdf5_tool:
        if fuzzing.returncode != 0 or artifacts:
            print(log[-8000:])
            print(f"FAILED: the fuzzer exited {fuzzing.returncode}; inputs kept: {artifacts}")
            return 1
        print("no fault found")
        return 0
    if fuzzing.returncode != 0 and not artifacts:
        print(log[-8000:])
        print(f"FAILED: the fuzzer exited {fuzzing.returncode} and saved no input")
        return 1
    failures = [(artifact, reason) for artifact in artifacts if (reason := judge(opts, artifact))]
    for artifact, reason in failures:
        print(f"FAILED {artifact}: {reason}")
    print(f"{len(artifacts)} saved input(s), {len(failures)} fault(s) in our code")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
