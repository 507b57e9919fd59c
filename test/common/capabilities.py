"""The only reasons a test may skip: capabilities this machine may lack.

A test that cannot run here for one of them prints exactly one line
`SKIPPED: capability <name>: <detail>` and exits 77 (CTest's
SKIP_RETURN_CODE): tremor_testing.skip_for in Python, perf_required_main.cpp
in C++. scripts/print-skips.py fails the CI on any other skip: a timing
miss, a busy machine or an unexplained skip is a failure, never a skip.
"""
CAPABILITIES = {
    "no-perf-switch-records": "perf_event_open refuses this process context-switch records "
                              "(perf_event_paranoid, a container's seccomp policy)",
    "no-pmu": "PAPI's perf_event component cannot count here: no PMU that libpfm4 knows "
              "(virtual machines), or perf refuses PAPI's events",
    "no-unshare": "no root, or unshare --uts --mount is refused: no UTS namespaces for fake nodes",
    "few-cores": "fewer CPUs than the test's ranks",
    "no-chromium": "no Chromium to render the page",
    "no-slurm": "Slurm's daemons cannot start here: slurm-wlm or munge not installed "
                "(scripts/install-deps.sh --tests), no root for slurmd, or munged, slurmctld or slurmd "
                "refusing to start",
    "no-hatchet": "LLNL's Hatchet is not importable (Debian has no package of it): "
                  "tremor.hatchet.graphframe cannot be built",
}

SKIP_PREFIX = "SKIPPED: capability "


def skip_line(capability, detail):
    """The one line a skip prints; KeyError for a name not in CAPABILITIES."""
    if capability not in CAPABILITIES:
        raise KeyError(f"{capability!r} is not a capability a test may skip for "
                       f"(test/common/capabilities.py: {', '.join(sorted(CAPABILITIES))})")
    detail = " ".join(str(detail).split())
    if not detail:
        raise ValueError(f"a skip for {capability} must say what this machine lacks")
    return f"{SKIP_PREFIX}{capability}: {detail}"


def capability_of(line):
    """The listed capability a `SKIPPED:` line names, or None."""
    if not line.startswith(SKIP_PREFIX):
        return None
    name, separator, detail = line[len(SKIP_PREFIX):].partition(": ")
    return name if separator and detail.strip() and name in CAPABILITIES else None
