#!/usr/bin/python3
"""Where a replay's estimate leaves its truth band, segment by segment.

For one replay (a folder of test/data/replays: run file and injector logs)
this lists the segments that Tremor charged most beyond the truth: Tremor's
charge is the largest excess over the ranks (`tremor export --format chrome`,
the per-segment slices), the truth band of a segment is the injected path's
machine bounds (scripts/injected_path.machine_path_segments, from the
injector's logs alone). For each listed segment it shows what every rank
spent: off the CPU (the run file's /detail), in the run queue (the kernel's
schedstat run delay between the injector's closing rows), in MPI and in file
I/O, and how long the same segment (same signature) took in the sibling
replays given with --siblings. Off-CPU time that the run queue does not
explain is time a rank was blocked in the kernel (a stall the run-queue truth
cannot see).

    segment_charges.py --tremor B/estimators/tremor REPLAY_DIR [--siblings DIR...] [--top 10]
"""
import argparse
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import injected_path  # noqa: E402


def unpacked(folder, scratch):
    """A copy of the replay folder with its files unzipped; the run file's path."""
    target = os.path.join(scratch, os.path.basename(os.path.normpath(folder)))
    os.makedirs(target)
    for path in glob.glob(os.path.join(folder, "*")):
        name = os.path.basename(path)
        if name.endswith(".gz"):
            with gzip.open(path) as source, open(os.path.join(target, name[:-3]), "wb") as sink:
                shutil.copyfileobj(source, sink)
        else:
            shutil.copy(path, target)
    runs = glob.glob(os.path.join(target, "*.h5"))
    if len(runs) != 1:
        raise SystemExit(f"{folder}: expected one run file, found {len(runs)}")
    return runs[0]


def charges(tremor, run_file):
    """{segment: Tremor's charge in s}: the largest excess over the ranks."""
    trace = subprocess.run([tremor, "export", run_file, "--format", "chrome", "-o", "-"],
                           check=True, capture_output=True, text=True).stdout
    charged = {}
    for event in json.loads(trace)["traceEvents"]:
        args = event.get("args") or {}
        if event.get("ph") == "X" and "segment" in args and "excess_s" in args:
            segment = args["segment"]
            charged[segment] = max(charged.get(segment, 0.0), args["excess_s"] or 0.0)
    return charged


def detail_column(h5, metric):
    """[rank][segment] values of a quantized metric in /detail."""
    return h5["bins"][metric]["value"][:][h5["detail"][metric][:]]


def run_queue(h5):
    """{(segment, rank): the rank's run-queue delay in the segment, s}."""
    logs = injected_path.run_logs(h5)
    segments = int(h5["segments/duration_s"].shape[0])
    closing = injected_path._closing_rows(logs, segments)  # the truth's own boundary rows
    queued = {}
    for (segment, rank), row in closing.items():
        before = closing.get((segment - 1, rank))
        if before is not None and row["queued_returned_s"] is not None:
            queued[(segment, rank)] = row["queued_returned_s"] - before["queued_returned_s"]
    return queued


def sibling_durations(paths):
    """{signature: [duration s]} over the sibling replays' segments seen once there."""
    by_signature = {}
    for path in paths:
        with h5py.File(path, "r") as h5:
            signatures = h5["segments/signature"][:]
            durations = h5["segments/duration_s"][:]
        for signature, duration in zip(signatures, durations):
            by_signature.setdefault(int(signature), []).append(float(duration))
    return by_signature


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("replay")
    parser.add_argument("--siblings", nargs="*", default=[])
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"
    scratch = tempfile.mkdtemp(prefix="segment-charges-")
    try:
        run_file = unpacked(args.replay, scratch)
        siblings = [unpacked(folder, scratch) for folder in args.siblings]
        charged = charges(args.tremor, run_file)
        with h5py.File(run_file, "r") as h5:
            bounds = injected_path.machine_path_segments(h5) or {}
            run_s = float(h5.attrs["run_time_s"])
            durations = h5["segments/duration_s"][:]
            signatures = h5["segments/signature"][:]
            ranks = list(h5["detail/ranks"][:])
            off_cpu, mpi, io = (detail_column(h5, m) for m in ("off_cpu_time", "mpi_time", "io_time"))
            queued = run_queue(h5)
        others = sibling_durations(siblings)
        total = sum(charged.values())
        high = sum(b[1] for b in bounds.values())
        print(f"{args.replay}: charged {1e3 * total:.2f} ms ({100 * total / run_s:.2f} %), "
              f"truth band high {1e3 * high:.2f} ms ({100 * high / run_s:.2f} %), run {run_s:.3f} s")
        beyond = sorted(((charged.get(s, 0.0) - bounds.get(s, (0.0, 0.0))[1], s) for s in charged), reverse=True)
        print(f"{'segment':>8} {'charged ms':>10} {'band ms':>15} {'duration ms':>11}  per rank: off-CPU / run queue / MPI / I/O ms"
              + ("   siblings' duration ms" if others else ""))
        for _, s in beyond[:args.top]:
            low, high_s = bounds.get(s, (0.0, 0.0))
            per_rank = "  ".join(
                f"r{rank}: {1e3 * off_cpu[i][s]:.2f}/{1e3 * queued.get((s, rank), float('nan')):.2f}/"
                f"{1e3 * mpi[i][s]:.2f}/{1e3 * io[i][s]:.2f}" for i, rank in enumerate(ranks))
            line = (f"{s:>8} {1e3 * charged[s]:>10.3f} [{1e3 * low:6.3f}, {1e3 * high_s:6.3f}] "
                    f"{1e3 * durations[s]:>11.3f}  {per_rank}")
            if others:
                seen = others.get(int(signatures[s]), [])
                line += "   " + (", ".join(f"{1e3 * d:.2f}" for d in seen[:8]) if seen else "-")
            print(line)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
