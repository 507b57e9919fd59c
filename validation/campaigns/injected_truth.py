"""The injected truth of a run for the validation campaigns: the injected
critical path (scripts/injected_path.py, which the demo shares) and the
machine's own part of the critical path.

The machine's own part (`machine_path`, the run-queue delays the injector
logged) is in scripts/injected_path.py too; its bounds are derived there.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from injected_path import (BOUNDARY_CALLS, TRACE_SETTINGS, TruthUnavailable, critical_path,  # noqa: E402,F401
                           excess_text, injected_percent, machine_path, read_logs, run_logs, was_delayed)


def delays(h5):
    """Every injected delay of the run (the injector's logs): a dict of arrays
    rank, segment, call, spent_s, time_s, in rank order."""
    rows = [row for _, ranks in sorted(run_logs(h5).items()) for row in ranks if was_delayed(row)]
    return {"rank": np.array([r["rank"] for r in rows], dtype=np.int64),
            "segment": np.array([r["segment"] for r in rows], dtype=np.int64),
            "call": [r["call"] for r in rows],
            "spent_s": np.array([r["spent_us"] * 1e-6 for r in rows], dtype=np.float64),
            "time_s": np.array([r["time_s"] for r in rows], dtype=np.float64)}
