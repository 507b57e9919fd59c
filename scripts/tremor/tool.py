"""Finds the `tremor` tool and asks it for the analysis: the package has no
estimator of its own, so every figure comes from `tremor analyze --json`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

from .errors import BAD_INPUT, INTERNAL, MISSING_PROGRAM, RunFileError

USAGE = 1


def _configured_tool() -> str | None:
    """The tremor of the build tree or install this copy of the package belongs to
    (CMake writes _location.py beside it); None for the source folder."""
    try:
        from . import _location  # type: ignore[attr-defined]
    except ImportError:
        return None
    path = _location.TREMOR_BIN
    if not os.path.isabs(path):
        path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), path))
    return path


def find_tremor(explicit: str | None = None) -> str:
    """explicit, else $TREMOR_BIN, else the tremor beside this package, else the first on PATH."""
    candidates = [explicit, os.environ.get("TREMOR_BIN"), _configured_tool(), shutil.which("tremor")]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise RunFileError("the tremor tool is not installed beside the tremor package nor on PATH; it analyses "
                       "the run file (set TREMOR_BIN)", MISSING_PROGRAM)


def analyze_json(path: str, tremor_bin: str | None = None) -> dict:
    """The JSON report of `tremor analyze --json -- path`; RunFileError with the tool's reason when it refuses."""
    tool = find_tremor(tremor_bin)
    try:
        done = subprocess.run([tool, "analyze", "--json", "--", path], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace")
    except OSError as error:
        raise RunFileError(f"cannot run {tool}: {error.strerror}", MISSING_PROGRAM) from None
    if done.returncode != 0:
        lines = [line.removeprefix("tremor: error: ") for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"{tool} analyze exited {done.returncode}"
        code = done.returncode if done.returncode in (BAD_INPUT, USAGE) else INTERNAL
        raise RunFileError(reason, code)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise RunFileError(f"{tool} analyze --json printed no JSON report for {path} ({error})", INTERNAL) from None
