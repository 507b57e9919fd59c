#!/usr/bin/env python3
"""A very long run (issue 10): N barriers on one process through the real
recording path; peak memory stays within the bound the data layout gives and
the analysis completes.

usage: long_run.py --launcher CMD --preload LIB --tremor TOOL --segments N -- APP
APP is barrier_loop: it prints its peak RSS (VmHWM) after MPI_Finalize, so the
finalize (tables, file, analysis, report) is inside the measurement. The bound
is checked on the growth over a 1000-barrier run of the same program, which
holds everything that does not grow with the segment count (MPI, PAPI, the
quantizers): peak(N) - peak(1000) <= B * N. The written file is then analysed
again offline by `tremor analyze`, whose peak RSS (from wait4) must stay under
its own bound over its own small-run baseline.

B is not a measured figure (those are in docs/overhead.md, "Memory and scale
bounds"): it is the bytes per segment of every array alive at the peak (in the
analysis at MPI_Finalize; heaptrack names them), from their element types,
each times the most its container can make resident beyond its size: 1 for
an array sized up front or a chunked store (one chunk more, a constant), 2
for a vector grown by push_back (while it moves, its old and new buffers are
both resident; capacity never touched is not):
    B = sum(bytes x growth) over LAYOUT (+ GATHERED in the profiled process)
A growth under B that the measured figures approach means a new per-segment
array: add it here and to docs/overhead.md.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

import h5py

from launch import environment_without_tremor, mpi_command, run_preloaded  # same folder

BASELINE_SEGMENTS = 1000
# (what, bytes per segment, growth): the analysis of a run, in the profiled
# process and in `tremor analyze` alike.
LAYOUT = [
    ("segment table: 6 doubles, uint64 signature, int32 late rank, uint16 call (run_data.hpp); "
     "read whole offline", 62, 2),
    ("detail row of the one rank: 6 uint16 bin indices, uint32 kind index", 16, 1),
    ("per segment: group int64, impact and 4-MAD impact doubles, class and interfered bytes", 26, 1),
    ("primary: lost double, subgroup int32, P(delayed) float, split-off and interfered bytes", 18, 1),
    ("primary: each group's durations and work (doubles), a float per measured residual", 20, 2),
    ("evidence: rank, I/O, foreign-CPU, turns and unreferenced seconds (doubles)", 40, 1),
    ("measured excess (double) and the values its clean level is read from (double)", 16, 1),
    ("members (size_t) by signature, by previous group, and a group's with its warm-up", 24, 2),
    ("primary membership (int64), the split groups' copy of their members (size_t)", 16, 1),
]
# Only in the profiled process: its own store and what the gather keeps.
GATHERED = [
    ("segment store: 6 two-byte codes and a 2-byte kind (segment_store.hpp), chunked", 14, 1),
    ("closing calls kept for the table (uint16)", 2, 1),
]
# Only in `tremor analyze`: a column read before it is stored (one at a time).
READ = [("one column's read buffer (double)", 8, 1)]


def bound(*tables):
    return sum(size * growth for table in tables for _, size, growth in table)


def fail(message):
    print("CHECK FAILED: " + message)
    sys.exit(1)


def run_app(opts, app, barriers, out):
    env = dict(environment_without_tremor(), LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none")
    start = time.monotonic()
    result = run_preloaded(mpi_command(opts.launcher, 1, app + [str(barriers)]), env, timeout=1200)
    seconds = time.monotonic() - start
    if result.returncode != 0:
        fail(f"{' '.join(result.args)} exited {result.returncode}: {result.stderr[-2000:]}")
    match = re.search(r"peak_rss_kb (\d+)", result.stdout)
    if not match:
        fail(f"no peak_rss_kb line in the program's output: {result.stdout!r}")
    files = [os.path.join(out, name) for name in os.listdir(out) if name.endswith(".h5")]
    if len(files) != 1:
        fail(f"expected one run file in {out}, found {os.listdir(out)}")
    return int(match.group(1)) * 1024, seconds, files[0]


def offline_peak(tool, path):
    """Runs `tremor analyze` as the only child of a fork, so RUSAGE_CHILDREN is its peak alone."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(tool, [tool, "analyze", "--json", path])
    start = time.monotonic()
    _, status, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"tremor analyze {path} exited with status {os.waitstatus_to_exitcode(status)}")
    return usage.ru_maxrss * 1024, seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--segments", type=int, required=True)
    parser.add_argument("app", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    opts.bytes_per_segment = bound(LAYOUT, GATHERED)
    opts.offline_bytes_per_segment = bound(LAYOUT, READ)
    app = opts.app[1:] if opts.app[:1] == ["--"] else opts.app
    barriers = opts.segments - 1  # the last segment is closed by MPI_Finalize
    with tempfile.TemporaryDirectory(prefix="tremor-long-") as small_dir, \
            tempfile.TemporaryDirectory(prefix="tremor-long-") as long_dir:
        base_peak, base_seconds, base_file = run_app(opts, app, BASELINE_SEGMENTS - 1, small_dir)
        peak, seconds, path = run_app(opts, app, barriers, long_dir)
        growth = (peak - base_peak) / opts.segments
        print(f"run of {opts.segments} segments: {seconds:.1f} s wall, peak RSS {peak / 2**20:.1f} MiB; "
              f"{BASELINE_SEGMENTS} segments: peak RSS {base_peak / 2**20:.1f} MiB ({base_seconds:.1f} s); "
              f"growth {growth:.1f} B/segment (bound {opts.bytes_per_segment:g})")
        with h5py.File(path, "r") as f:
            stored = f["segments/duration_s"].shape[0]
            if stored != opts.segments:
                fail(f"the file holds {stored} segments, expected {opts.segments}")
            if "analysis" not in f or "report_json" not in f["analysis"]:
                fail("the analysis did not complete: no /analysis/report_json in the file")
            report = json.loads(f["analysis/report_json"][()])
        if report.get("segments", opts.segments) != opts.segments:
            fail(f"the report counts {report.get('segments')} segments")
        if growth > opts.bytes_per_segment:
            fail(f"peak RSS grew {growth:.1f} B/segment, above the {opts.bytes_per_segment:g} of the data layout")
        base_offline, _ = offline_peak(opts.tremor, base_file)
        offline, offline_seconds = offline_peak(opts.tremor, path)
        offline_growth = (offline - base_offline) / opts.segments
        print(f"tremor analyze: {offline_seconds:.1f} s, peak RSS {offline / 2**20:.1f} MiB "
              f"({base_offline / 2**20:.1f} MiB at {BASELINE_SEGMENTS} segments); growth {offline_growth:.1f} "
              f"B/segment (bound {opts.offline_bytes_per_segment:g}); file {os.path.getsize(path) / 2**20:.1f} MiB")
        if offline_growth > opts.offline_bytes_per_segment:
            fail(f"tremor analyze grew {offline_growth:.1f} B/segment, above the {opts.offline_bytes_per_segment:g} "
                 f"of the data layout")
    print("long run OK")


if __name__ == "__main__":
    main()
