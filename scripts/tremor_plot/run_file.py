"""What the plots need from a Tremor run file, read by the tremor package
(scripts/tremor): the report is `tremor analyze --json`'s, so tremor-plot
accepts exactly the files `tremor analyze` accepts, and the file is decoded
there (no second HDF5 decoder)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import tremor
from tremor import RunFileError  # noqa: F401  (tremor-plot's one error for bad input)


@dataclass
class RunView:
    path: str
    report: dict                       # the JSON report of `tremor analyze --json`
    duration_s: np.ndarray             # per segment, max over ranks
    segment_group: np.ndarray          # per segment, group index (-1: none, or not known)
    segment_class: np.ndarray          # 0 unused, 1 normal, 2 interfered
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


def view_of(run: tremor.Run) -> RunView:
    """The arrays the charts draw. Where the file's per-segment analysis is not the one
    `tremor analyze` gives now, segments show without a group, interfered ones still ringed."""
    timeline = run.timeline
    group = timeline["group"].fillna(-1).to_numpy(dtype=np.int64)
    stored_class = timeline["class"].fillna(-1).to_numpy(dtype=np.int64)
    segment_class = np.where(timeline["interfered"].to_numpy(), 2, np.where(stored_class >= 0, stored_class, 0))
    view = RunView(path=run.path, report=run.report, duration_s=timeline["duration_s"].to_numpy(dtype=float),
                   segment_group=group, segment_class=segment_class,
                   late_rank=timeline["late_rank"].to_numpy(dtype=np.int64),
                   configuration=list(run.configuration.items()),
                   command_line=run.metadata["cmdline"], mpi_flavour=run.metadata["mpi.flavour"],
                   mpi_library_version=run.metadata["mpi.library_version"])
    if len(run.injection):
        view.injection_ranks = run.injection["rank"].to_numpy()
        view.injection_spent_us = run.injection["spent_us"].to_numpy(dtype=float)
    if run.speed is not None:
        view.speed_ranks = run.speed.index.to_numpy(dtype=np.int64)
        view.speed_edges_s = np.append(run.speed.columns.left.to_numpy(), run.speed.columns.right[-1])
        view.speed = run.speed.to_numpy(dtype=float)
    return view


def load_run(path: str) -> RunView:
    """The run, analysed by the tremor tool of this install (the wrapper sets TREMOR_PLOT_TOOL)."""
    return view_of(tremor.read(path, tremor_bin=os.environ.get("TREMOR_PLOT_TOOL") or None))
