"""The injected critical path of a run: what the planted delays cost the run.

The truth comes from the injector's own per-rank logs (tremor-inject_*.csv,
injector/README.md), never from what the profiler recorded: which call and
rank was delayed, by how much, and when each rank entered each collective.
The runs must trace the collectives (TRACE_SETTINGS: every rank logs every
collective, delayed or not), and the logs must lie beside the run file (the
injector writes them into TREMOR_OUTPUT_DIR, like the profiler).

A segment ends when its last rank reaches the closing collective. A delay
planted in that collective (the injector sleeps inside the call) lengthens the
segment only by what it adds beyond the last other rank's arrival: a rank that
would have waited anyway loses its sleep to that wait. With a_r the time rank r
entered the closing collective (the log's entered_s, one clock for the node)
and c_r its delay there, per segment

    cost = max_r(a_r + c_r) - max_r(a_r)

Delays planted in the segment's other calls (point-to-point, I/O, other
collectives) can hold up other ranks through their messages, which are not
traced: the largest sum per rank of those counts in full. The closing
collective of a segment is, on each rank, its last logged call of a boundary
kind (interpose/mpi_calls.py) in that segment; the last segment ends at
MPI_Finalize, so its delays count in full. Segments are the log's `segment`
column, which the injector read from the profiler as each call was made.

`largest_delay_s` is the simpler bound: per segment the largest sum of one
rank's delays, closing collective included.

Shared by scripts/demo_truth.py and the validation campaigns
(validation/campaigns/injected_truth.py, which adds the machine's own part).
"""
import csv
import glob
import importlib.util
import os
import re


def _intercepted_calls():
    """interpose/mpi_calls.py, the one table of intercepted calls, loaded from
    its file (it lives with the wrapper generator, not in a package)."""
    table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interpose", "mpi_calls.py")
    spec = importlib.util.spec_from_file_location("mpi_calls", table)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MPI_CALLS


# Settings every injected run needs so that its truth can be computed.
TRACE_SETTINGS = {"TREMOR_INJECT_TRACE": "coll"}
BOUNDARY_CALLS = frozenset(name for name, _, kind, _ in _intercepted_calls() if kind.startswith("boundary:"))
_FILE_RANK = re.compile(r"_r(\d+)_\d+-\d+\.csv$")


class TruthUnavailable(ValueError):
    """The injector's logs cannot give the truth (missing, several runs, untraced)."""


def read_logs(directory):
    """{rank: [row dict]} of the injector logs in directory, values parsed; the
    rows of each rank in the order the calls were made."""
    logs = {}
    for path in sorted(glob.glob(os.path.join(directory, "tremor-inject_*.csv"))):
        match = _FILE_RANK.search(os.path.basename(path))
        if match is None:
            continue
        rank = int(match.group(1))
        if rank in logs:
            raise TruthUnavailable(f"{directory}: injector logs of several runs (rank {rank} twice)")
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
        logs[rank] = [{"rank": int(r["rank"]), "call": r["call"], "segment": int(r["segment"]),
                       "requested_us": float(r["requested_us"]), "spent_us": float(r["spent_us"]),
                       "time_s": float(r["time_s"]),
                       "entered_s": _number_or_none(r.get("entered_s")),
                       "queued_entered_s": _number_or_none(r.get("queued_entered_s")),
                       "queued_returned_s": _number_or_none(r.get("queued_returned_s"))} for r in rows]
    return logs


def _number_or_none(text):
    return float(text) if text else None


def was_delayed(row):
    """Whether the injector delayed the logged call."""
    return row["requested_us"] > 0.0 or row["spent_us"] > 0.0


def run_logs(h5):
    """The injector logs beside the run file h5, one per rank of the run."""
    directory = os.path.dirname(os.path.abspath(h5.filename))
    logs = read_logs(directory)
    world = int(h5.attrs["world_size"]) if "world_size" in h5.attrs else len(logs)
    if logs and sorted(logs) != list(range(world)):
        raise TruthUnavailable(f"{directory}: injector logs of ranks {sorted(logs)}, the run has {world}")
    return logs


def critical_path(h5):
    """(critical path s, largest delay s) of the planted delays; (0, 0) without any.
    Segment -1 (Tremor's own start-up) is left out."""
    logs = run_logs(h5)
    if not logs and "injection/rank" in h5 and h5["injection/rank"].shape[0] > 0:
        raise TruthUnavailable(f"{h5.filename}: the run was injected but no injector log lies beside it")
    segments = int(h5["segments/duration_s"].shape[0])
    closing = {}  # (segment, rank) -> the rank's last boundary-call row in the segment
    per_segment = {}  # segment -> rank -> [s in the closing collective, s in other calls]
    for rank, rows in logs.items():
        for row in rows:
            if 0 <= row["segment"] < segments - 1 and row["call"] in BOUNDARY_CALLS:
                closing[(row["segment"], rank)] = row
    for rank, rows in logs.items():
        for row in rows:
            segment = row["segment"]
            if not (was_delayed(row) and 0 <= segment < segments):
                continue
            in_closing = closing.get((segment, rank)) is row
            per_segment.setdefault(segment, {}).setdefault(rank, [0.0, 0.0])[0 if in_closing else 1] += \
                row["spent_us"] * 1e-6

    critical_s = 0.0
    largest_s = 0.0
    for segment, ranks in sorted(per_segment.items()):
        largest_s += max(c + o for c, o in ranks.values())
        others = max(o for _, o in ranks.values())
        delayed_closing = {rank: c for rank, (c, _) in ranks.items() if c > 0.0}
        if not delayed_closing:
            critical_s += others
            continue
        arrivals = {}
        for rank in logs:
            row = closing.get((segment, rank))
            if row is None or row["entered_s"] is None:
                raise TruthUnavailable(
                    f"no arrival of rank {rank} at segment {segment}'s closing collective in the injector logs: "
                    f"run with {' '.join(f'{k}={v}' for k, v in TRACE_SETTINGS.items())}")
            arrivals[rank] = row["entered_s"]
        names = {closing[(segment, rank)]["call"] for rank in logs}
        if len(names) != 1:
            raise TruthUnavailable(f"segment {segment}: the ranks' last collectives differ: {sorted(names)}")
        latest = max(arrivals.values())
        delayed = max(arrivals[rank] + delayed_closing.get(rank, 0.0) for rank in arrivals)
        critical_s += max(0.0, delayed - latest) + others
    return critical_s, largest_s


def injected_percent(h5):
    """The injected critical path in % of the run time."""
    critical_s, _ = critical_path(h5)
    return 100.0 * critical_s / float(h5.attrs["run_time_s"])


# The machine's own part of the critical path.
#
# The machine's own interference (`machine_path`) comes from the same logs:
# each traced call carries the rank's run-queue delay so far (the kernel's
# schedstat, time runnable but not running) when it was forwarded and when it
# returned. With q_r what rank r lost to the run queue between its previous
# closing collective's return and this one's entry, i_r what it lost inside
# the collective, a_r + c_r when it reached the real call (c_r its planted delay
# there) and L the latest of those, the machine's part of a segment lies
# between two bounds. Low: what the arrivals show, as if the ranks did not
# wait for one another before the collective, plus inside the collective what
# must have come after the last arrival,
#
#     low = L - max_r(a_r + c_r - q_r) + max_r max(0, i_r - (L - a_r - c_r))
#
# High: every rank's run-queue delay in full, sum_r(q_r + i_r): ranks coupled
# by untraced messages arrive together whoever was delayed, and delays of two
# ranks at different moments of a segment pass on one after the other.
# Segment 0 counts from each rank's last call of Tremor's own start-up
# (segment -1, e.g. the spill's broadcast of its file name, just before the
# profiler's first segment opens), and is left out where a rank logged none;
# the last segment (it ends at MPI_Finalize, which is not logged) is left out.

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


def _machine_segments(h5):
    """Per counted segment: (segment, low s, high s, the latest-ready rank,
    {rank: its run-queue delay s}); None without run-queue delays in the logs."""
    logs = run_logs(h5)
    segments = int(h5["segments/duration_s"].shape[0])
    closing = _closing_rows(logs, segments)
    if not closing or any(row["queued_entered_s"] is None or row["queued_returned_s"] is None
                          for row in closing.values()):
        return None
    counted = []
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
        high = max(low, sum(queued[r] + inside[r] for r in logs))
        counted.append((segment, low, high, max(ready, key=ready.get), {r: queued[r] + inside[r] for r in logs}))
    return counted


def machine_path_segments(h5):
    """{segment: (low s, high s)}: machine_path's bounds segment by segment,
    for the segments it counts; None where the logs do not carry run-queue
    delays (an older injector, a kernel without schedstat)."""
    counted = _machine_segments(h5)
    return None if counted is None else {segment: (low, high) for segment, low, high, _, _ in counted}


def excess_text(shares):
    """Each share less their mean (its excess over an equal share),
    space-separated with 2 decimals; "" for none."""
    return " ".join(f"{x - sum(shares) / len(shares):.2f}" for x in shares) if shares else ""


def machine_path_ranks(h5):
    """{rank: (on the critical path s, in the run queue s)}: per rank, the low
    bound of each counted segment where that rank was the last ready (the
    machine's delay the run's critical path shows on it), and its own
    run-queue delay over the same segments; None as machine_path_segments."""
    counted = _machine_segments(h5)
    if counted is None:
        return None
    ranks = {}
    for _, low, _, latest, queued in counted:
        for rank, delay in queued.items():
            path, total = ranks.get(rank, (0.0, 0.0))
            ranks[rank] = (path + (low if rank == latest else 0.0), total + delay)
    return ranks


def machine_path(h5):
    """(low s, high s): the bounds of what the machine's own processes cost the
    run's critical path (module docstring), from the run-queue delays the
    injector logged; None where the logs do not carry them (an older
    injector, a kernel without schedstat)."""
    bounds = machine_path_segments(h5)
    if bounds is None:
        return None
    low_s = high_s = 0.0
    for low, high in bounds.values():
        low_s += low
        high_s += high
    return low_s, high_s
