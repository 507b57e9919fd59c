"""tremor-plot's exit statuses: the numbers of the `tremor` tool's table
(estimators/cli/exit_codes.hpp; test/hostile checks that they agree)."""

OK = 0
USAGE = 1             # bad options
BAD_INPUT = 2         # the run file is unreadable, damaged or invalid (as `tremor analyze --check` says)
OUTPUT = 4            # an output refused or not written
INTERNAL = 70
MISSING_PROGRAM = 127  # no `tremor` tool to check the run file
