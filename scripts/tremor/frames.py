"""The DataFrames of a Run, from what the file recorded and the JSON report of
`tremor analyze`. Nothing here estimates: charges, groups and episodes are the
report's; per-segment charges are the stored analysis's, used only when it is
the analysis `tremor analyze` gives now (segment_analysis_current)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .run_file import METRICS, Recorded

# The report fields that the per-segment results add up to: equal in the
# stored and the fresh report, the stored per-segment columns are this analysis's.
SEGMENT_FIGURES = ("segments", "method", "lost_percent", "paper_mad4_percent", "interfered_segments", "groups")
DETAIL_COLUMNS = {"duration": "duration_s", "mpi_time": "mpi_s", "io_time": "io_s", "wait_time": "wait_s",
                  "off_cpu_time": "off_cpu_s", "work": "work"}


def segment_analysis_current(recorded: Recorded, report: dict) -> bool:
    stored = recorded.analysis
    return stored is not None and all(stored.report.get(key) == report.get(key) for key in SEGMENT_FIGURES)


def segment_starts(recorded: Recorded, report: dict) -> np.ndarray:
    """Seconds since MPI_Init: the durations summed and scaled to the run time, the
    time axis of the report's episodes (estimators/analysis/src/diagnosis.cpp)."""
    duration = np.nan_to_num(recorded.segments["duration_s"].astype(float), nan=0.0, posinf=0.0, neginf=0.0)
    ends = np.cumsum(np.maximum(duration, 0.0))
    total, run_time = (ends[-1] if len(ends) else 0.0), report.get("run_time_s") or 0.0
    if total > 0.0 and run_time > 0.0:
        ends = ends * (run_time / total)
    return np.concatenate([[0.0], ends[:-1]]) if len(ends) else ends


def timeline(recorded: Recorded, report: dict) -> pd.DataFrame:
    """One row per segment in run order (index `segment`)."""
    seg = recorded.segments
    count = len(seg["duration_s"])
    interfered = np.zeros(count, dtype=bool)
    interfered[np.asarray(report.get("interfered_segments") or [], dtype=np.int64)] = True
    current = segment_analysis_current(recorded, report)
    stored = recorded.analysis

    def stored_column(values, dtype):
        return pd.array(values, dtype=dtype) if current else pd.array([pd.NA] * count, dtype=dtype)

    frame = pd.DataFrame({
        "start_s": segment_starts(recorded, report),
        "duration_s": seg["duration_s"].astype(float),
        "call": pd.Categorical([recorded.call_names[i] for i in seg["closing_call"]]),
        "late_rank": seg["late_rank"].astype(np.int64),
        "work": seg["work"].astype(float),
        "mpi_s": seg["mpi_time_s"].astype(float),
        "io_s": seg["io_time_s"].astype(float),
        "group": stored_column(stored.segment_group if current else None, "Int64"),
        "excess_s": stored_column(stored.segment_lost_s if current else None, "Float64"),
        "mad4_excess_s": stored_column(stored.segment_mad4_s if current else None, "Float64"),
        "headline_excess_s": stored_column(stored.segment_headline_s if current else None, "Float64"),
        "class": stored_column(stored.segment_class if current else None, "Int64"),
        "interfered": interfered,
    })
    frame.index.name = "segment"
    return frame


def segments(recorded: Recorded, per_segment: pd.DataFrame) -> pd.DataFrame:
    """One row per detail rank and segment (index [rank, segment]): the rank's own
    recorded values beside its segment's analysis (the same on every rank's row)."""
    ranks = recorded.detail_ranks
    count = len(per_segment)
    index = pd.MultiIndex.from_product([ranks, np.arange(count)], names=["rank", "segment"])
    columns = {"start_s": np.tile(per_segment["start_s"].to_numpy(), len(ranks))}
    for metric in METRICS:
        if metric in recorded.detail:
            columns[DETAIL_COLUMNS[metric]] = recorded.detail[metric].astype(float).ravel()
    for feature, values in recorded.detail_bytes.items():
        columns[feature] = values.astype(np.int64).ravel()
    frame = pd.DataFrame(columns, index=index)
    calls = per_segment["call"]
    frame["call"] = pd.Categorical.from_codes(np.tile(calls.cat.codes, len(ranks)), calls.cat.categories)
    for name in ("group", "excess_s", "mad4_excess_s", "interfered"):
        frame[name] = pd.array(np.tile(per_segment[name].array, len(ranks)), dtype=per_segment[name].dtype)
    frame["late"] = np.repeat(ranks, count) == np.tile(per_segment["late_rank"].to_numpy(), len(ranks))
    return frame


def _named(rows, key) -> set:
    return {row[key] for row in rows or []}


def ranks(recorded: Recorded, report: dict) -> pd.DataFrame:
    """One row per process (index `rank`): placement, the kernel's and injector's figures,
    the report's charges (diagnosis, stragglers) and the raw totals."""
    order = np.argsort(recorded.ranks["rank"], kind="stable")  # the report's arrays are in rank order
    table = {name: values[order] for name, values in recorded.ranks.items()}
    frame = pd.DataFrame({"node": table["node_id"].astype(np.int64), "hostname": table["hostname"],
                          "local_rank": table["local_rank"].astype(np.int64)},
                         index=pd.Index(table["rank"].astype(np.int64), name="rank"))
    frame["detail"] = frame.index.isin(recorded.detail_ranks)
    diagnosis = report.get("diagnosis") or {}
    per_rank = diagnosis.get("ranks") or {}
    run_time = report.get("run_time_s") or 0.0
    for name in ("lost_percent", "imbalance_percent", "work_ratio"):
        values = per_rank.get(name)
        frame[name] = np.array([np.nan if v is None else v for v in values], dtype=float) if values else np.nan
    frame["lost_s"] = frame["lost_percent"] * run_time / 100.0
    frame["named"] = frame.index.isin(_named(diagnosis.get("slow_ranks"), "rank"))
    late = {row["rank"]: row for row in (report.get("stragglers") or {}).get("ranks") or []}
    frame["late_segments"] = [late.get(rank, {}).get("segments", 0) for rank in frame.index]
    frame["late_impact_s"] = [late.get(rank, {}).get("impact_s", 0.0) for rank in frame.index]
    for name in ("run_queue_delay_s", "slept_s", "own_sleep_s", "injected_s"):
        frame[name] = table[name].astype(float)
    for name, values in recorded.totals.items():
        frame[f"total_{name}"] = values
    return frame


def nodes(recorded: Recorded, report: dict, rank_frame: pd.DataFrame) -> pd.DataFrame:
    """One row per node (index `node`): its ranks' charges summed, as the report's
    diagnosis sums them, and the stragglers' impact of its late ranks."""
    grouped = rank_frame.groupby("node")
    frame = pd.DataFrame({
        "hostname": grouped["hostname"].first(),
        "ranks": grouped.size(),
        "lost_percent": grouped["lost_percent"].sum(min_count=1),
        "lost_s": grouped["lost_s"].sum(min_count=1),
        "run_queue_delay_s": grouped["run_queue_delay_s"].sum(min_count=1),
        "injected_s": grouped["injected_s"].sum(min_count=1),
    })
    diagnosis = report.get("diagnosis") or {}
    frame["named"] = frame.index.isin(_named(diagnosis.get("slow_nodes"), "node"))
    late = {row["node_id"]: row for row in (report.get("stragglers") or {}).get("nodes") or []}
    frame["late_segments"] = [late.get(node, {}).get("segments", 0) for node in frame.index]
    frame["late_impact_s"] = [late.get(node, {}).get("impact_s", 0.0) for node in frame.index]
    frame.index.name = "node"
    return frame


def groups(report: dict) -> pd.DataFrame:
    """The report's usable groups (index `group`, the number of timeline's `group`)."""
    rows = []
    for group in report.get("groups") or []:
        row = {key: value for key, value in group.items() if key != "gev"}
        gev = group.get("gev") or {}
        row["fit"] = gev.get("chosen")
        row["fits_disagree"] = gev.get("disagree")
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(index=pd.Index([], name="group", dtype=np.int64))
    return frame.set_index("index").rename_axis("group")


def episodes(report: dict) -> pd.DataFrame:
    """The report's episodes, in time order (index `episode`)."""
    rows = ((report.get("diagnosis") or {}).get("episodes")) or []
    columns = ["start_s", "end_s", "start_utc", "end_utc", "first_segment", "last_segment", "lost_percent", "ranks"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["lost_s"] = frame["lost_percent"].astype(float) * (report.get("run_time_s") or 0.0) / 100.0
    frame.index.name = "episode"
    return frame


def speed(recorded: Recorded, current: bool) -> pd.DataFrame | None:
    """The diagnosis' speed map (index `rank`, columns the time bins), when stored by this analysis."""
    stored = recorded.analysis
    if not current or stored is None or stored.speed is None:
        return None
    columns = pd.IntervalIndex.from_breaks(stored.speed_edges_s, closed="left", name="time_s")
    return pd.DataFrame(stored.speed, index=pd.Index(stored.speed_ranks, name="rank"), columns=columns)


def injection(recorded: Recorded) -> pd.DataFrame:
    """The injector's delays (ground truth), one row each; empty without an injector."""
    return pd.DataFrame(recorded.injection)


def environment(recorded: Recorded) -> dict[str, pd.DataFrame]:
    """/environment's tables (`nodes`, `ranks`, `variables`, `rank_differences`); {} when not recorded."""
    return {name: pd.DataFrame(table) for name, table in recorded.environment.items()}
