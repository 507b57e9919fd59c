"""Reads what the plots need from a Tremor run file (docs/schema.md, docs/report.md).

The file is first checked by the `tremor` tool (`tremor analyze --check`), so
tremor-plot accepts exactly the files `tremor analyze` accepts, by the one
loader and set of rules in C++ (segments/src/run_file_read.cpp and
run_file_validate.cpp); only then is it opened with h5py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field

import h5py
import numpy as np

from . import exit_codes


class RunFileError(Exception):
    """The file cannot be plotted; the message is one line for the user."""

    def __init__(self, message: str, exit_code: int = exit_codes.BAD_INPUT):
        super().__init__(message)
        self.exit_code = exit_code


def tremor_tool() -> str | None:
    """The tremor tool of this install (the wrapper sets TREMOR_PLOT_TOOL), else the first on PATH."""
    configured = os.environ.get("TREMOR_PLOT_TOOL", "")
    if configured and os.access(configured, os.X_OK):
        return configured
    return shutil.which("tremor")


def check_run_file(path: str) -> None:
    """Raises RunFileError with the tool's own one-line reason unless `tremor analyze --check` accepts the file."""
    tool = tremor_tool()
    if tool is None:
        raise RunFileError("the tremor tool is not installed beside tremor-plot nor on PATH; it checks the run file "
                           "(set TREMOR_PLOT_TOOL)", exit_codes.MISSING_PROGRAM)
    try:
        checked = subprocess.run([tool, "analyze", "--check", "--", path], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, errors="replace")
    except OSError as error:
        raise RunFileError(f"cannot run {tool}: {error.strerror}", exit_codes.MISSING_PROGRAM) from None
    if checked.returncode == exit_codes.OK:
        return
    lines = [line.removeprefix("tremor: error: ") for line in checked.stderr.splitlines() if line.strip()]
    reason = lines[-1] if lines else f"{tool} analyze --check exited {checked.returncode}"
    code = checked.returncode if checked.returncode in (exit_codes.BAD_INPUT, exit_codes.USAGE) else exit_codes.INTERNAL
    raise RunFileError(reason, code)


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
    """The file, already checked by check_run_file; a problem h5py still finds is one RunFileError."""
    try:
        return _load_run(path)
    except RunFileError:
        raise
    except Exception as error:  # noqa: BLE001  h5py, numpy and json raise many kinds; never a traceback
        raise RunFileError(f"{path}: cannot read what the page needs ({type(error).__name__}: {error})") from None


def _load_run(path: str) -> RunView:
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
