"""The injected truth of a run for the validation campaigns: the injected
critical path (scripts/injected_path.py, which the demo shares) and the
machine's own part of the critical path.

The machine's own interference (`machine_path`) comes from the same logs:
each traced call carries the rank's run-queue delay so far (the kernel's
schedstat, time runnable but not running) when it was forwarded and when it
returned. With q_r what rank r lost to the run queue between its previous
closing collective's return and this one's entry, i_r what it lost inside
the collective, a_r + c_r when it reached the real call (c_r its planted delay
there) and L the latest of those, the machine's part of a segment lies
between two bounds. Low: what the arrivals show, as if the ranks did not
wait for one another before the collective, plus inside the collective what
must have come after the last arrival,

    low = L - max_r(a_r + c_r - q_r) + max_r max(0, i_r - (L - a_r - c_r))

High: every rank's run-queue delay in full, sum_r(q_r + i_r): ranks coupled
by untraced messages arrive together whoever was delayed, and delays of two
ranks at different moments of a segment pass on one after the other.
Segment 0 counts from each rank's last call of Tremor's own start-up
(segment -1, e.g. the spill's broadcast of its file name, just before the
profiler's first segment opens), and is left out where a rank logged none;
the last segment (it ends at MPI_Finalize, which is not logged) is left out.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from injected_path import (BOUNDARY_CALLS, TRACE_SETTINGS, TruthUnavailable, critical_path,  # noqa: E402,F401
                           injected_percent, read_logs, run_logs, was_delayed)


def delays(h5):
    """Every injected delay of the run (the injector's logs): a dict of arrays
    rank, segment, call, spent_s, time_s, in rank order."""
    rows = [row for _, ranks in sorted(run_logs(h5).items()) for row in ranks if was_delayed(row)]
    return {"rank": np.array([r["rank"] for r in rows], dtype=np.int64),
            "segment": np.array([r["segment"] for r in rows], dtype=np.int64),
            "call": [r["call"] for r in rows],
            "spent_s": np.array([r["spent_us"] * 1e-6 for r in rows], dtype=np.float64),
            "time_s": np.array([r["time_s"] for r in rows], dtype=np.float64)}


def _closing_rows(logs, segments):
    """{(segment, rank): the rank's last boundary-call row in the segment}, for
    every segment but the last (it ends at MPI_Finalize); for Tremor's
    start-up (segment -1) the rank's last row of any call, where the first
    segment opens."""
    closing = {}
    for rank, rows in logs.items():
        for row in rows:
            if row["segment"] == -1 or (0 <= row["segment"] < segments - 1 and row["call"] in BOUNDARY_CALLS):
                closing[(row["segment"], rank)] = row
    return closing


def machine_path(h5):
    """(low s, high s): the bounds of what the machine's own processes cost the
    run's critical path (module docstring), from the run-queue delays the
    injector logged; None where the logs do not carry them (an older
    injector, a kernel without schedstat)."""
    logs = run_logs(h5)
    segments = int(h5["segments/duration_s"].shape[0])
    closing = _closing_rows(logs, segments)
    if not closing or any(row["queued_entered_s"] is None or row["queued_returned_s"] is None
                          for row in closing.values()):
        return None
    low_s = high_s = 0.0
    for segment in range(0, segments - 1):
        rows = {rank: closing.get((segment, rank)) for rank in logs}
        before = {rank: closing.get((segment - 1, rank)) for rank in logs}
        if any(rows[r] is None or before[r] is None for r in logs):
            continue
        ready = {r: rows[r]["entered_s"] + rows[r]["spent_us"] * 1e-6 for r in logs}
        queued = {r: max(0.0, rows[r]["queued_entered_s"] - before[r]["queued_returned_s"]) for r in logs}
        inside = {r: max(0.0, rows[r]["queued_returned_s"] - rows[r]["queued_entered_s"]) for r in logs}
        latest = max(ready.values())
        after_last = max(max(0.0, inside[r] - (latest - ready[r])) for r in logs)
        low = latest - max(ready[r] - queued[r] for r in logs) + after_last
        low_s += low
        high_s += max(low, sum(queued[r] + inside[r] for r in logs))
    return low_s, high_s
