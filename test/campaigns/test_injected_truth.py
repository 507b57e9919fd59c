#!/usr/bin/env python3
"""The campaigns' truth (scripts/campaigns/injected_truth.py) on small run files
written here, whose critical path is known by construction:

- a delay in the closing collective of the last rank to arrive costs it in full;
- one on a rank that waited there anyway costs nothing, and one on a rank
  that waited less than its delay costs the difference;
- a delay in another call counts in full, on top of the closing one;
- a delayed rank without a detail row counts in full;
- segment -1 (Tremor's own start-up) counts nothing.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "campaigns"))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

import injected_truth  # noqa: E402

CALLS = ["MPI_Allreduce", "MPI_Send", "MPI_Barrier"]


def write_run(path, waits, delays, detail_ranks=(0, 1), run_time_s=1.0):
    """waits[rank][segment]: the rank's wait in the closing collective (s); delays:
    (segment, rank, call, s). Every segment closes with MPI_Allreduce."""
    waits = np.asarray(waits, dtype=np.float64)
    segments = waits.shape[1]
    values = np.unique(waits)
    with h5py.File(path, "w") as h5:
        h5.attrs["run_time_s"] = run_time_s
        h5["call_names"] = np.array(CALLS, dtype=h5py.string_dtype())
        h5["segments/duration_s"] = np.full(segments, 0.1)
        h5["segments/closing_call"] = np.zeros(segments, dtype=np.uint16)
        h5["bins/wait_time/value"] = values
        rows = [waits[r] for r in detail_ranks]
        h5["detail/wait_time"] = np.searchsorted(values, np.array(rows)).astype(np.uint16)
        h5["detail/ranks"] = np.array(detail_ranks, dtype=np.int32)
        h5["injection/segment"] = np.array([d[0] for d in delays], dtype=np.int64)
        h5["injection/rank"] = np.array([d[1] for d in delays], dtype=np.int32)
        h5["injection/call"] = np.array([d[2] for d in delays], dtype=h5py.string_dtype())
        h5["injection/spent_us"] = np.array([d[3] * 1e6 for d in delays])


def critical(path):
    with h5py.File(path, "r") as h5:
        return injected_truth.critical_path(h5)


def expect(name, got, want, failures):
    if abs(got - want) > 1e-9:
        failures.append(f"{name}: {got:.6f} s, expected {want:.6f} s")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.h5")
        # Segment 0: rank 1 sleeps 10 ms in the closing collective and arrives last
        # (rank 0 waited 10 ms for it): 10 ms. Segment 1: rank 1 sleeps 10 ms but rank 0
        # arrived 200 ms after it (rank 1 waited 210 ms, its sleep included): nothing.
        # Segment 2: rank 1 sleeps 10 ms, rank 0 arrived 4 ms after rank 1 would have
        # without it (rank 0 waited 6 ms): 6 ms.
        write_run(path, [[0.010, 0.0, 0.006], [0.010, 0.210, 0.010]],
                  [(0, 1, "MPI_Allreduce", 0.010), (1, 1, "MPI_Allreduce", 0.010), (2, 1, "MPI_Allreduce", 0.010)])
        got, largest = critical(path)
        expect("closing delays against the other rank's arrival", got, 0.016, failures)
        expect("largest delay per segment", largest, 0.030, failures)

        # A 5 ms delay in a send before the collective counts in full, beside a closing
        # delay absorbed by the wait; start-up delays (segment -1) count nothing.
        write_run(path, [[0.0], [0.210]],
                  [(-1, 0, "MPI_Barrier", 0.5), (0, 1, "MPI_Send", 0.005), (0, 1, "MPI_Allreduce", 0.010)])
        got, largest = critical(path)
        expect("a delay in another call", got, 0.005, failures)
        expect("largest with another call", largest, 0.015, failures)

        # The same closing delay on a rank without a detail row counts in full.
        write_run(path, [[0.0], [0.210]], [(0, 1, "MPI_Allreduce", 0.010)], detail_ranks=(0,))
        got, _ = critical(path)
        expect("a delayed rank without detail", got, 0.010, failures)

        # A delay in a call of the closing collective's name that is not the segment's
        # last delay of that rank is not the closing one.
        write_run(path, [[0.0], [0.210]], [(0, 1, "MPI_Allreduce", 0.004), (0, 1, "MPI_Send", 0.001)])
        got, _ = critical(path)
        expect("an earlier call of the closing name", got, 0.005, failures)

        with h5py.File(path, "r") as h5:
            percent = injected_truth.injected_percent(h5)
        if abs(percent - 0.5) > 1e-9:
            failures.append(f"percent of the run: {percent}, expected 0.5")
    for failure in failures:
        print("FAIL", failure)
    print("injected truth:", "ok" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
