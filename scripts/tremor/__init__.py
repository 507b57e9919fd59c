"""Tremor run files as pandas DataFrames (docs/python.md).

    import tremor
    run = tremor.read("app-1234-0.h5")      # a Run: .report, .metadata, .segments, .ranks, .nodes, ...
    runs = tremor.read_many(paths)          # .metadata (one row per run) and the frames under `profile`
    tremor.hatchet.graphframe(run)          # a Hatchet GraphFrame, where Hatchet is installed

Every figure is the one `tremor analyze --json` gives for the file; a file that
cannot be read raises tremor.RunFileError.
"""
from .errors import RunFileError
from .run import Run, Runs, read, read_many
from . import hatchet

__all__ = ["RunFileError", "Run", "Runs", "read", "read_many", "hatchet"]
