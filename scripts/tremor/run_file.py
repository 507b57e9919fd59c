"""The one HDF5 decoder of the Python side (docs/schema.md): what a run file
recorded, and the per-segment results its /analysis group stored. The file is
read only after `tremor analyze` accepted it, so shapes are as the schema says
(segments/src/run_file_validate.cpp checked them); items of later schema
versions may be absent from older files and read as NaN or empty."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import h5py
import numpy as np

from .errors import RunFileError

METRICS = ("duration", "mpi_time", "io_time", "wait_time", "work", "off_cpu_time")
BYTE_FEATURES = ("bytes_sent", "bytes_received", "io_bytes_read", "io_bytes_written")
RANK_FACTS = ("run_queue_delay_s", "slept_s", "own_sleep_s", "injected_s")


@dataclass
class StoredAnalysis:
    """What the end-of-run analysis wrote into /analysis (absent after a crash)."""
    report: dict
    segment_group: np.ndarray
    segment_class: np.ndarray
    segment_lost_s: np.ndarray
    segment_mad4_s: np.ndarray
    segment_headline_s: np.ndarray
    speed_ranks: np.ndarray | None = None
    speed_edges_s: np.ndarray | None = None
    speed: np.ndarray | None = None


@dataclass
class Recorded:
    attributes: dict
    call_names: list[str]
    segments: dict[str, np.ndarray]                # /segments/*
    detail_ranks: np.ndarray                       # [R]
    detail: dict[str, np.ndarray]                  # metric -> [R, S] values in the metric's unit
    detail_bytes: dict[str, np.ndarray]            # feature -> [R, S]
    ranks: dict[str, np.ndarray]                   # /ranks/*
    totals: dict[str, np.ndarray]                  # /totals/*
    configuration: list[tuple[str, str]] = field(default_factory=list)
    injection: dict[str, np.ndarray] = field(default_factory=dict)
    environment: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    analysis: StoredAnalysis | None = None


def text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _column(dataset) -> np.ndarray:
    """A dataset as a NumPy array; fixed-length strings as Python str objects."""
    values = dataset[()]
    if values.dtype.kind == "S":
        return np.array([text(item) for item in values], dtype=object)
    return values


def _table(group) -> dict[str, np.ndarray]:
    return {name: _column(item) for name, item in group.items() if isinstance(item, h5py.Dataset)}


def _detail(handle) -> tuple[dict, dict]:
    detail = {metric: handle[f"bins/{metric}/value"][()][handle[f"detail/{metric}"][()]]
              for metric in METRICS if f"detail/{metric}" in handle}
    features = [text(name) for name in handle["detail/signature_features"][()]]
    rows = (handle["detail/signature_offset"][()].astype(np.int64)[:, None]
            + handle["detail/signature_index"][()].astype(np.int64))
    signatures = handle["detail/signatures"][()]
    detail_bytes = {feature: signatures[rows, features.index(feature)] if signatures.size else np.zeros(rows.shape)
                    for feature in BYTE_FEATURES if feature in features}
    return detail, detail_bytes


def _stored_analysis(handle) -> StoredAnalysis | None:
    if "analysis/report_json" not in handle or "analysis/segments" not in handle:
        return None
    report = json.loads(text(handle["analysis/report_json"][()]))
    segments = handle["analysis/segments"]
    stored = StoredAnalysis(report, segments["group"][()], segments["class"][()],
                            segments["lost_s"][()].astype(float), segments["mad4_impact_s"][()].astype(float),
                            segments["impact_s"][()].astype(float))
    speed = handle.get("analysis/diagnosis/speed")
    if speed is not None and {"ranks", "edges_s", "speed"} <= set(speed.keys()):
        ranks, edges, flat = speed["ranks"][()], speed["edges_s"][()], speed["speed"][()].astype(float)
        if len(ranks) and len(edges) > 1 and flat.size == len(ranks) * (len(edges) - 1):
            stored.speed_ranks, stored.speed_edges_s = ranks, edges
            stored.speed = flat.reshape(len(ranks), len(edges) - 1)
    return stored


def read_recorded(path: str) -> Recorded:
    """Decodes the file; any failure is one RunFileError (h5py, NumPy and json raise many kinds)."""
    try:
        with h5py.File(path, "r") as handle:
            return _read(handle)
    except RunFileError:
        raise
    except Exception as error:  # noqa: BLE001
        raise RunFileError(f"{path}: cannot read the run file ({type(error).__name__}: {error})") from None


def _read(handle) -> Recorded:
    detail, detail_bytes = _detail(handle)
    recorded = Recorded(
        attributes={name: text(value) if isinstance(value, bytes) else value for name, value in handle.attrs.items()},
        call_names=[text(name) for name in handle["call_names"][()]],
        segments=_table(handle["segments"]),
        detail_ranks=handle["detail/ranks"][()].astype(np.int64),
        detail=detail,
        detail_bytes=detail_bytes,
        ranks=_table(handle["ranks"]),
        totals=_table(handle["totals"]),
        analysis=_stored_analysis(handle),
    )
    world = len(recorded.ranks["rank"])
    for name in RANK_FACTS:
        recorded.ranks.setdefault(name, np.full(world, np.nan))
    if "configuration" in handle:
        recorded.configuration = list(zip(_column(handle["configuration/name"]),
                                          _column(handle["configuration/value"])))
    if "injection" in handle:
        recorded.injection = _table(handle["injection"])
    if "environment" in handle:
        recorded.environment = {name: _table(group) for name, group in handle["environment"].items()
                                if isinstance(group, h5py.Group)}
    return recorded
