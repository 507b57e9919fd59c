"""Reads what the plots need from a Tremor run file (docs/schema.md, docs/report.md)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import h5py
import numpy as np


class RunFileError(Exception):
    """The file cannot be plotted; the message is one line for the user."""


@dataclass
class RunView:
    path: str
    report: dict                       # the JSON report stored in /analysis/report_json
    duration_s: np.ndarray             # per segment, max over ranks
    segment_group: np.ndarray          # per segment, group index (-1: none)
    segment_class: np.ndarray          # 0 unused, 1 normal, 2 interfered
    segment_impact_s: np.ndarray
    late_rank: np.ndarray
    configuration: list[tuple[str, str]] = field(default_factory=list)
    injection_ranks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    injection_spent_us: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # The diagnosis' speed map: rows = detail ranks, columns = time bins (NaN: no usable segment).
    speed_ranks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    speed_edges_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    speed: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    command_line: str = ""
    mpi_flavour: str = ""
    mpi_library_version: str = ""


def _strings(dataset) -> list[str]:
    """Fixed-length NUL-padded UTF-8 datasets come back as bytes."""
    return [item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
            for item in dataset[()]]


def _attribute_text(attributes, name: str) -> str:
    value = attributes.get(name, "")
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def load_run(path: str) -> RunView:
    try:
        handle = h5py.File(path, "r")
    except FileNotFoundError:
        raise RunFileError(f"{path}: no such file") from None
    except OSError as error:
        raise RunFileError(f"{path}: not a readable HDF5 file ({error})") from None
    with handle:
        if "schema_version" not in handle.attrs or "segments" not in handle:
            raise RunFileError(f"{path}: not a Tremor run file (no schema_version or /segments)")
        if "analysis" not in handle or "report_json" not in handle["analysis"]:
            raise RunFileError(
                f"{path}: no /analysis group: the run ended before Tremor's end-of-run analysis "
                "(crash or TREMOR_ENABLE=0); `tremor analyze` can still print its report")
        raw_report = handle["analysis/report_json"][()]
        if isinstance(raw_report, bytes):
            raw_report = raw_report.decode("utf-8")
        try:
            report = json.loads(raw_report)
        except json.JSONDecodeError as error:
            raise RunFileError(f"{path}: /analysis/report_json is not valid JSON ({error})") from None

        segments = handle["segments"]
        analysis_segments = handle["analysis/segments"]
        view = RunView(
            path=path,
            report=report,
            duration_s=segments["duration_s"][()].astype(float),
            segment_group=analysis_segments["group"][()].astype(int),
            segment_class=analysis_segments["class"][()].astype(int),
            segment_impact_s=analysis_segments["impact_s"][()].astype(float),
            late_rank=segments["late_rank"][()].astype(int),
            command_line=_attribute_text(handle.attrs, "command_line"),
            mpi_flavour=_attribute_text(handle.attrs, "mpi_flavour"),
            mpi_library_version=_attribute_text(handle.attrs, "mpi_library_version"),
        )
        if "configuration" in handle:
            names = _strings(handle["configuration/name"])
            values = _strings(handle["configuration/value"])
            view.configuration = list(zip(names, values))
        speed_group = handle.get("analysis/diagnosis/speed")
        if speed_group is not None and {"ranks", "edges_s", "speed"} <= set(speed_group.keys()):
            ranks = speed_group["ranks"][()].astype(np.int64)
            edges = speed_group["edges_s"][()].astype(float)
            flat = speed_group["speed"][()].astype(float)
            if len(ranks) and len(edges) > 1 and flat.size == len(ranks) * (len(edges) - 1):
                view.speed_ranks, view.speed_edges_s = ranks, edges
                view.speed = flat.reshape(len(ranks), len(edges) - 1)
        if "injection" in handle and "rank" in handle["injection"]:
            view.injection_ranks = handle["injection/rank"][()]
            view.injection_spent_us = handle["injection/spent_us"][()].astype(float)
    if not (len(view.duration_s) == len(view.segment_group) == len(view.segment_class)):
        raise RunFileError(f"{path}: /segments and /analysis/segments differ in length")
    return view
