"""The injected critical path of a run file: what the planted delays cost the run.

A segment ends when its last rank reaches the closing collective. A delay
planted in that collective (the injector sleeps inside the call, so the
sleep is part of the rank's recorded wait there) lengthens the segment only
by what it adds beyond the last other rank's arrival: a rank that would have
waited anyway loses its sleep to that wait. Each rank's arrival is the
segment's end less its recorded wait (/detail/wait_time), so per segment

    cost = max_r(arrival_r + closing_delay_r) - max_r(arrival_r)

Delays planted in the segment's other calls (point-to-point, I/O, other
collectives) can hold up other ranks through their messages, which the run
file does not trace: the largest sum per rank of those counts in full.
Segments whose delayed ranks have no detail row count every delay in full.

`largest_delay_s` is the simpler bound: per segment the largest sum of one
rank's delays, closing collective included.
"""
import numpy as np


def _text(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def _detail_values(h5, metric):
    """Per detail rank and segment, the decoded value of a metric (bin value of each index)."""
    return h5[f"bins/{metric}/value"][:][h5[f"detail/{metric}"][:]]


def critical_path(h5):
    """(critical path s, largest delay s) of the planted delays; (0, 0) without any.
    Segment -1 (Tremor's own start-up) is left out."""
    if "injection" not in h5 or h5["injection/rank"].shape[0] == 0:
        return 0.0, 0.0
    segments = int(h5["segments/duration_s"].shape[0])
    delay_segment = h5["injection/segment"][:].astype(np.int64)
    delay_rank = h5["injection/rank"][:].astype(np.int64)
    delay_s = h5["injection/spent_us"][:].astype(np.float64) * 1e-6
    delay_call = _text(h5["injection/call"][:])
    call_names = _text(h5["call_names"][:])
    closing_call = [call_names[i] for i in h5["segments/closing_call"][:]]

    # A rank's delay in the closing collective is its last delay in the segment,
    # planted in the call that closes it.
    last_delay = {}
    for i, (segment, rank) in enumerate(zip(delay_segment, delay_rank)):
        last_delay[(int(segment), int(rank))] = i
    per_segment = {}  # segment -> rank -> [s in the closing collective, s in other calls]
    for i, (segment, rank, spent) in enumerate(zip(delay_segment, delay_rank, delay_s)):
        segment, rank = int(segment), int(rank)
        if not 0 <= segment < segments:
            continue
        in_closing = last_delay[(segment, rank)] == i and delay_call[i] == closing_call[segment]
        per_segment.setdefault(segment, {}).setdefault(rank, [0.0, 0.0])[0 if in_closing else 1] += float(spent)

    row = {}
    wait = None
    if "detail/ranks" in h5 and "detail/wait_time" in h5:
        row = {int(rank): r for r, rank in enumerate(h5["detail/ranks"][:])}
        wait = _detail_values(h5, "wait_time")

    critical_s = 0.0
    largest_s = 0.0
    for segment, ranks in per_segment.items():
        largest_s += max(c + o for c, o in ranks.values())
        closing_here = {rank: c for rank, (c, _) in ranks.items() if c > 0.0}
        others = max(o for _, o in ranks.values())
        if not closing_here:
            critical_s += others
        elif wait is not None and all(rank in row for rank in closing_here):
            arrival = -wait[:, segment].astype(np.float64)  # relative to the segment's end
            delayed = arrival.copy()
            for rank, c in closing_here.items():
                delayed[row[rank]] += c
            critical_s += max(0.0, float(delayed.max() - arrival.max())) + others
        else:
            critical_s += max(c + o for c, o in ranks.values())
    return critical_s, largest_s


def injected_percent(h5):
    """The injected critical path in % of the run time."""
    critical_s, _ = critical_path(h5)
    return 100.0 * critical_s / float(h5.attrs["run_time_s"])

