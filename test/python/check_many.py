"""tremor.read_many over three runs: one metadata row per run (index
`profile`) and every per-run frame under a `profile` level.

usage: check_many.py RUNS_DIR --tremor PATH

Known-wrong implementation it fails: frames concatenated without the profile
level (rows of two runs share [rank, segment]), or metadata of the last run only.
"""
import argparse

import tremor

from python_testing import analyze_json, check, finish, run_files

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--tremor", required=True)
options = parser.parse_args()

paths = run_files(options.directory)[:3]
runs = tremor.read_many(paths)
reports = [analyze_json(options.tremor, path) for path in paths]
check(len(runs.metadata) == 3 and runs.metadata.index.name == "profile", f"3 rows by profile: {runs.metadata.index}")
check(runs.metadata["lost_percent"].tolist() == [report["lost_percent"] for report in reports],
      "each row's lost_percent is its run's")
for key in ("jobid", "user", "launchdate", "clustername", "mpi.world.size", "tremor.version", "lost_percent",
            "lost_percent.low", "lost_percent.high", "class"):
    check(key in runs.metadata.columns, f"metadata column {key}")
expected_levels = {"segments": ["profile", "rank", "segment"], "timeline": ["profile", "segment"],
                   "groups": ["profile", "group"], "ranks": ["profile", "rank"], "nodes": ["profile", "node"],
                   "episodes": ["profile", "episode"]}
for name, levels in expected_levels.items():
    frame = getattr(runs, name)
    check(list(frame.index.names) == levels, f"{name} indexed {levels}, got {frame.index.names}")
    for profile, run in enumerate(runs.runs):
        part = getattr(run, name)
        check(len(frame.loc[profile]) == len(part) if len(part) else profile not in frame.index.get_level_values(0),
              f"{name} of profile {profile}: {len(part)} rows")
check(len(runs.segments) == sum(report["segments"] * 2 for report in reports), "segments: runs x segments x 2 ranks")
finish("check_many")
