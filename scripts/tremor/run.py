"""tremor.read: one run file as pandas DataFrames beside its JSON report."""
from __future__ import annotations

import os
import pwd
import re
import shlex

import pandas as pd

from . import frames
from .errors import RunFileError
from .run_file import read_recorded
from .tool import analyze_json


class Run:
    """One Tremor run (docs/python.md lists every column).

    report       the JSON report of `tremor analyze --json` (docs/report.md)
    metadata     flat dict of Adiak-style names: jobid, user, launchdate, clustername, ...
    segments     [rank, segment] per detail rank and segment
    timeline     [segment] one row per segment, in run order
    groups       [group] the usable groups
    ranks        [rank] every process;  nodes [node] every node
    episodes     [episode] the windows in which segments ran slow
    environment  dict of DataFrames (nodes, ranks, variables, rank_differences); {} when not recorded
    configuration  dict setting -> value used;  injection  the injector's delays
    speed        the speed map (rank x time bin) or None
    segment_analysis_current  False when the file's /analysis is not the analysis `tremor analyze`
                 gives now (another Tremor wrote it; or a crash left none): the per-segment
                 group and excess columns are then missing (<NA>)
    """

    def __init__(self, path: str, report: dict, recorded: frames.Recorded):
        self.path = path
        self.report = report
        self.segment_analysis_current = frames.segment_analysis_current(recorded, report)
        self.timeline = frames.timeline(recorded, report)
        self.segments = frames.segments(recorded, self.timeline)
        self.groups = frames.groups(report)
        self.ranks = frames.ranks(recorded, report)
        self.nodes = frames.nodes(recorded, report, self.ranks)
        self.episodes = frames.episodes(report)
        self.environment = frames.environment(recorded)
        self.configuration = dict(recorded.configuration)
        self.injection = frames.injection(recorded)
        self.speed = frames.speed(recorded, self.segment_analysis_current)
        self.metadata = metadata(path, report, recorded)

    def __repr__(self) -> str:
        lost = self.metadata.get("lost_percent")
        figure = f"{lost:.1f} % lost" if lost is not None else "no estimate"
        size = self.metadata["mpi.world.size"]
        return f"<tremor.Run {self.path}: {size} ranks, {len(self.timeline)} segments, {figure}>"


def _user(path: str) -> str:
    """The run file's owner: the user the run wrote it as."""
    uid = os.stat(path).st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _clustername(hostname: str) -> str:
    """Adiak's rule: the host name without its domain and its trailing node number."""
    short = hostname.split(".")[0]
    return re.sub(r"[-_]?\d+$", "", short) or short


def metadata(path: str, report: dict, recorded: frames.Recorded) -> dict:
    attributes = recorded.attributes
    command_line = str(attributes.get("command_line", ""))
    try:
        executable = os.path.basename(shlex.split(command_line)[0]) if command_line.strip() else ""
    except ValueError:
        executable = command_line.split()[0] if command_line.split() else ""
    hostnames = recorded.ranks["hostname"]
    interval = report.get("lost_percent_ci") or [None, None]
    run_time = report.get("run_time_s")
    lost = report.get("lost_percent")
    library = str(attributes.get("mpi_library_version", "")).strip().splitlines()
    return {
        "path": os.path.abspath(path),
        "jobid": str(attributes.get("job_id", "")),
        "user": _user(path),
        "launchdate": int(attributes.get("start_time_unix", 0) or 0),
        "clustername": _clustername(str(hostnames[0])) if len(hostnames) else "",
        "executable": executable,
        "cmdline": command_line,
        "mpi.world.size": int(attributes.get("world_size", len(hostnames))),
        "numhosts": int(attributes.get("node_count", 0)),
        "mpi.flavour": str(attributes.get("mpi_flavour", "")),
        "mpi.library_version": library[0] if library else "",
        "tremor.version": str(attributes.get("tremor_version", "")),
        "partial": bool(report.get("partial")),
        "run_time_s": run_time,
        "segments": report.get("segments"),
        "estimate_possible": bool(report.get("estimate_possible")),
        "method": report.get("method"),
        "interference_percent": report.get("interference_percent"),
        "lost_percent": lost,
        "lost_percent.low": interval[0],
        "lost_percent.high": interval[1],
        "lost_s": lost * run_time / 100.0 if lost is not None and run_time is not None else None,
        "class": report.get("class"),
        "probability_high": report.get("probability_high"),
    }


def read(path: str | os.PathLike, tremor_bin: str | None = None) -> Run:
    """Reads one run file. The report comes from `tremor analyze --json` (tremor_bin,
    else $TREMOR_BIN, else the tremor of this build or install, else PATH), which also
    checks the file; a file it refuses raises RunFileError with its reason."""
    path = os.fspath(path)
    report = analyze_json(path, tremor_bin)
    recorded = read_recorded(path)
    try:
        return Run(path, report, recorded)
    except Exception as error:  # noqa: BLE001  a file `tremor analyze` accepts but these tables cannot hold
        raise RunFileError(f"{path}: cannot tabulate the run ({type(error).__name__}: {error})") from None


def _concat(runs: list[Run], name: str) -> pd.DataFrame:
    parts = [getattr(run, name) for run in runs]
    return pd.concat(parts, keys=range(len(runs)), names=["profile"]) if parts else pd.DataFrame()


class Runs:
    """Several runs, the way Thicket holds them: metadata is one row per run (index
    `profile`, 0.. in the order given); segments, timeline, groups, ranks, nodes and
    episodes are the runs' frames under an outer `profile` index level."""

    def __init__(self, runs: list[Run]):
        self.runs = runs
        self.metadata = pd.DataFrame([run.metadata for run in runs], index=pd.RangeIndex(len(runs), name="profile"))
        for name in ("segments", "timeline", "groups", "ranks", "nodes", "episodes"):
            setattr(self, name, _concat(runs, name))

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, profile: int) -> Run:
        return self.runs[profile]


def read_many(paths) -> Runs:
    """tremor.read on each path; the first file that cannot be read raises RunFileError."""
    return Runs([read(path) for path in paths])
