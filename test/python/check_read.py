"""tremor.read's figures are `tremor analyze --json`'s on the same file.

usage: check_read.py RUNS_DIR --tremor PATH

For each run of python.make_runs: the lost seconds (metadata, and the
per-segment excess summed), the per-rank and per-node charges, the episodes,
the groups, the interfered segments and the metadata equal the tool's JSON;
the segment frame has segments x detail ranks rows (counted with h5py), and its
per-rank values are the file's. Known-wrong implementations it fails: a reader
that returns the report stored in the file's /analysis (the replay was
analysed by an earlier Tremor: its diagnosis differs); one that charges each
rank's excess to every segment row without the segment-wide rule (the sum
over one rank's rows would not be the lost time); one whose time axis is not
the episodes' (episode start != its first segment's start); one that drops
the ranks or the nodes the stragglers list.
"""
import argparse
import json
import math

import h5py
import numpy as np
import tremor

from python_testing import analyze_json, check, finish, run_files

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--tremor", required=True)
options = parser.parse_args()


def close(a, b, rel=1e-9, abs_tol=1e-12):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def check_run(path):
    report = analyze_json(options.tremor, path)
    run = tremor.read(path)
    check(run.report == report, f"{path}: Run.report is `tremor analyze --json`'s")
    with h5py.File(path, "r") as handle:
        segment_count = handle["segments/duration_s"].shape[0]
        detail_ranks = handle["detail/ranks"][()]
        work_codes = handle["detail"]["work"][()]
        work_values = handle["bins"]["work"]["value"][()]
        stored = json.loads(handle["analysis/report_json"][()]) if "analysis/report_json" in handle else None
    # Segment counts.
    check(report["segments"] == segment_count == len(run.timeline), f"{path}: {len(run.timeline)} timeline rows")
    check(len(run.segments) == segment_count * len(detail_ranks),
          f"{path}: segments x detail ranks = {segment_count} x {len(detail_ranks)}, got {len(run.segments)}")
    check(list(run.segments.index.names) == ["rank", "segment"], f"{path}: segments indexed [rank, segment]")
    for row, rank in enumerate(detail_ranks):
        check(np.array_equal(run.segments.loc[rank, "work"].to_numpy(), work_values[work_codes[row]]),
              f"{path}: rank {rank}'s work per segment is the file's")
    # Lost seconds.
    lost_s = report["lost_percent"] * report["run_time_s"] / 100.0 if report["estimate_possible"] else None
    check(close(run.metadata["lost_s"], lost_s), f"{path}: metadata lost_s {run.metadata['lost_s']} vs {lost_s}")
    check(run.metadata["lost_percent"] == report["lost_percent"], f"{path}: lost_percent")
    check([run.metadata["lost_percent.low"], run.metadata["lost_percent.high"]] == report["lost_percent_ci"],
          f"{path}: lost_percent interval")
    check(run.metadata["class"] == report["class"], f"{path}: class")
    check(run.metadata["tremor.version"] == report["tremor_version"], f"{path}: tremor.version")
    check(run.metadata["mpi.world.size"] == report["world_size"], f"{path}: mpi.world.size")
    if run.segment_analysis_current:
        # float32 per segment in /analysis: the sum agrees to about 1e-6.
        first_rank = detail_ranks[0]
        for name, frame in (("timeline", run.timeline), ("one rank's segments", run.segments.loc[first_rank])):
            summed = float(frame["excess_s"].sum())
            check(close(summed, lost_s, rel=1e-5, abs_tol=1e-6), f"{path}: {name}' excess {summed} = lost {lost_s}")
    else:
        check(run.timeline["excess_s"].isna().all(), f"{path}: no stale per-segment excess")
    interfered = sorted(run.timeline.index[run.timeline["interfered"]].tolist())
    check(interfered == report["interfered_segments"], f"{path}: interfered segments")
    # Per-rank and per-node charges.
    diagnosis = report.get("diagnosis") or {}
    charges = (diagnosis.get("ranks") or {}).get("lost_percent")
    if charges is not None:
        check(run.ranks["lost_percent"].tolist() == charges, f"{path}: per-rank charges {charges}")
    for row in diagnosis.get("slow_ranks") or []:
        check(close(run.ranks.loc[row["rank"], "lost_percent"], row["lost_percent"]), f"{path}: slow rank {row}")
    for row in diagnosis.get("slow_nodes") or []:
        check(close(run.nodes.loc[row["node"], "lost_percent"], row["lost_percent"], rel=1e-9),
              f"{path}: slow node {row}")
    stragglers = report.get("stragglers") or {}
    for row in stragglers.get("ranks") or []:
        check(run.ranks.loc[row["rank"], "late_impact_s"] == row["impact_s"]
              and run.ranks.loc[row["rank"], "late_segments"] == row["segments"], f"{path}: straggler rank {row}")
    for row in stragglers.get("nodes") or []:
        check(run.nodes.loc[row["node_id"], "late_impact_s"] == row["impact_s"]
              and run.nodes.loc[row["node_id"], "late_segments"] == row["segments"], f"{path}: straggler node {row}")
    check(len(run.ranks) == report["world_size"] and len(run.nodes) == report["node_count"],
          f"{path}: {report['world_size']} ranks, {report['node_count']} nodes")
    # Episodes, on the timeline's time axis.
    episodes = diagnosis.get("episodes") or []
    check(len(run.episodes) == len(episodes), f"{path}: {len(episodes)} episodes")
    for number, episode in enumerate(episodes):
        row = run.episodes.loc[number]
        for key, value in episode.items():
            check(row[key] == value, f"{path}: episode {number} {key} {row[key]} vs {value}")
        start = run.timeline.loc[episode["first_segment"], "start_s"]
        check(close(start, episode["start_s"], rel=1e-9), f"{path}: episode {number} starts at its segment {start}")
    # Groups.
    check(sorted(run.groups.index) == sorted(group["index"] for group in report["groups"]), f"{path}: groups")
    for group in report["groups"]:
        check(run.groups.loc[group["index"], "lost_s"] == group["lost_s"], f"{path}: group {group['index']} lost_s")
    return report, stored


paths = run_files(options.directory)
for path in paths:
    report, stored = check_run(path)
    if "replay" in path:
        # The file's own report is an earlier analysis: the package must not return it.
        check(stored is not None and stored != {**report, "output_file": stored.get("output_file")},
              f"{path}: the replay's stored report differs from this analysis (else it proves nothing)")
# The hatchet graph's leaves add up to each rank's time (graph built without Hatchet).
run = tremor.read(paths[1])
leaves = tremor.hatchet.component_times(run)
for rank, frame in run.segments.groupby(level="rank"):
    expected = float(np.maximum(frame["duration_s"], frame["mpi_s"] + frame["io_s"]).sum())
    got = float(leaves.loc[leaves["rank"] == rank, "time"].sum())
    check(close(got, expected, rel=1e-9), f"hatchet leaves of rank {rank}: {got} vs {expected}")
finish("check_read")
