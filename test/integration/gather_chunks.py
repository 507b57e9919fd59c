#!/usr/bin/env python3
"""The finalize gather's per-segment reduction in several pieces on several
ranks (interpose/finalize_gather.cpp: the MPI_Ireduce of collective 4 sends
its records in datatype elements of at most kMaxRecordsPerElement).

usage: gather_chunks.py --launcher CMD --np N --preload LIB --segments S
                        --records-per-element E -- BARRIER_LOOP

LIB is built with E records per element (the library's 4096 would take
thousands of barriers, slow on ranks that busy-poll more cores than there
are). S segments (S - 1 barriers) give one record per program-wide bin and
one per segment, more than E: the reduction has several elements, the
segments' records fill the last ones. Each reduced column of the run file is
compared with the same reduction computed here from the detail matrices
(every rank is a detail rank), which reach rank 0 by another collective (the
gatherv of collective 3):
  segments/duration_s   the value of the largest duration index over ranks
  segments/late_rank    a rank with the least MPI-time index (the one, when unique)
  segments/late_wait_s  the value of the least wait index over ranks
  segments/signature    the sum over ranks of the hashes of the segments' kinds
  bins/<metric>/count   the cells of each index over ranks and segments
"""
import argparse
import os
import sys
import tempfile

import h5py
import numpy as np

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded
from robustness import finish  # same folder: the shared verdict

MASK = (1 << 64) - 1
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def signature_hash(features):
    """signature_hash in segments/src/segment_store.cpp."""
    h = splitmix64(len(features))
    for value in features:
        h = splitmix64(h ^ splitmix64(int(value)))
    return h


def first_mismatch(mask):
    return int(np.flatnonzero(mask)[0]) if mask.any() else None


def check_reduced(f, column, expected, which):
    """/segments/COLUMN equals the reduction over ranks (which: its words) of the detail's values."""
    bad = ~np.isclose(f[f"segments/{column}"][:], expected, rtol=1e-12, atol=0.0)
    check(not bad.any(), f"{column} differs from {which} over ranks at {bad.sum()} segments, first "
                         f"{first_mismatch(bad)}")


def check_run(path, ranks, segments, per_element):
    with h5py.File(path, "r") as f:
        if not check(list(f["detail/ranks"][:]) == list(range(ranks)), f"detail ranks {f['detail/ranks'][:]}"):
            return
        index = {m: f[f"detail/{m}"][:].astype(np.int64) for m in ("duration", "mpi_time", "wait_time")}
        value = {m: f[f"bins/{m}/value"][:] for m in index}
        stored = f["segments/duration_s"].shape[0]
        if not check(stored == segments and index["duration"].shape == (ranks, segments),
                     f"{stored} segments stored, detail {index['duration'].shape}, expected {segments}"):
            return
        bins_total = sum(len(f[f"bins/{m}/count"]) for m in f["bins"])
        elements = -(-(bins_total + segments) // per_element)
        segment_elements = elements - bins_total // per_element
        check(segment_elements >= 2, f"{bins_total} bins + {segments} segments: the segments' records fill "
                                     f"{segment_elements} element(s) of {per_element}, expected several")
        print(f"{ranks} ranks, {segments} segments, {bins_total} bins: {elements} elements of {per_element} records, "
              f"the last from segment {(elements - 1) * per_element - bins_total}")

        check_reduced(f, "duration_s", value["duration"][index["duration"].max(axis=0)], "the largest")

        late = f["segments/late_rank"][:].astype(np.int64)
        least = index["mpi_time"].min(axis=0)
        in_range = (late >= 0) & (late < ranks)
        bad = ~in_range
        bad[in_range] = index["mpi_time"][late[in_range], np.flatnonzero(in_range)] != least[in_range]
        unique = (index["mpi_time"] == least).sum(axis=0) == 1
        bad |= unique & (late != index["mpi_time"].argmin(axis=0))
        check(not bad.any(), f"late_rank is not a rank with the least MPI time at {bad.sum()} segments, first "
                             f"{first_mismatch(bad)}")

        check_reduced(f, "late_wait_s", value["wait_time"][index["wait_time"].min(axis=0)], "the least")

        signatures = f["detail/signatures"][:]
        offsets = f["detail/signature_offset"][:].astype(np.int64)
        kinds = f["detail/signature_index"][:].astype(np.int64)
        hashes = [signature_hash(row) for row in signatures]
        expected = [sum(hashes[offsets[r] + kinds[r, s]] for r in range(ranks)) & MASK for s in range(segments)]
        bad = np.array([int(a) != b for a, b in zip(f["segments/signature"][:], expected)])
        check(not bad.any(), f"signature differs from the sum of the kinds' hashes at {bad.sum()} segments, first "
                             f"{first_mismatch(bad)}")

        for metric in f["bins"]:
            counts = f[f"bins/{metric}/count"][:].astype(np.int64)
            cells = np.bincount(f[f"detail/{metric}"][:].ravel(), minlength=len(counts))
            check(np.array_equal(counts, cells), f"bins/{metric}/count differs from the detail cells' count at "
                                                 f"indices {np.flatnonzero(counts != cells)[:10].tolist()}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--segments", type=int, required=True)
    parser.add_argument("--records-per-element", type=int, required=True)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tremor-gather-") as out:
        env = dict(environment_without_tremor(), LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none")
        command = mpi_command(opts.launcher, opts.np, launched_program(opts) + [str(opts.segments - 1)])
        result = run_preloaded(command, env, timeout=240)
        if check(result.returncode == 0, f"{' '.join(result.args)} exited {result.returncode}: {result.stderr[-2000:]}"):
            files = [os.path.join(out, name) for name in os.listdir(out) if name.endswith(".h5")]
            if check(len(files) == 1, f"expected one run file, found {os.listdir(out)}"):
                check_run(files[0], opts.np, opts.segments, opts.records_per_element)
    finish("gather_chunks", failures)


if __name__ == "__main__":
    main()
