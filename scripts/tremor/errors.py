"""The one exception the package raises for a run file it cannot read."""
from __future__ import annotations

# The `tremor` tool's exit statuses (estimators/cli/exit_codes.hpp).
BAD_INPUT = 2
INTERNAL = 70
MISSING_PROGRAM = 127


class RunFileError(Exception):
    """A run file that cannot be read: missing, not HDF5, truncated, of an unknown
    schema, or refused by `tremor analyze`; also no `tremor` tool to analyse it.

    str(error) is one line for the user (the tool's own reason where it gave one);
    exit_code is the status a command line should end with: 2 (bad input),
    70 (the analysis failed inside) or 127 (no `tremor` tool)."""

    def __init__(self, message: str, exit_code: int = BAD_INPUT):
        super().__init__(message)
        self.exit_code = exit_code
