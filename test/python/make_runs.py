"""Fixture of the tremor package's tests: three runs of the bundled demo (2
ranks; nothing planted, delays planted on rank 1, delays on both ranks) and
one replay run file of an earlier Tremor (its /analysis is not this analysis).

usage: make_runs.py DIR --tremor-run PATH --launcher "cmd" --app BSP_DEMO --replay FILE.h5.gz
"""
import argparse
import gzip
import os
import shutil
import subprocess

from python_testing import check, finish
from launch import mpi_command

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--tremor-run", required=True)
parser.add_argument("--launcher", required=True)
parser.add_argument("--app", required=True)
parser.add_argument("--replay", required=True)
options = parser.parse_args()

RUNS = {
    "demo-0-clean": [],
    "demo-1-rank1": ["--inject", "mean=20000,sd=3000,p=0.08,calls=coll,ranks=1,seed=7"],
    "demo-2-both": ["--inject", "mean=15000,sd=2000,p=0.05,calls=coll,seed=11"],
}

shutil.rmtree(options.directory, ignore_errors=True)
for name, inject in RUNS.items():
    folder = os.path.join(options.directory, name)
    os.makedirs(folder)
    command = mpi_command(options.launcher, 2, [options.tremor_run, "--output-dir", folder, "--report", "none",
                                                *inject, options.app, "-n", "120", "-u", "1000", "-k", "0", "-q"])
    env = {key: value for key, value in os.environ.items() if key not in ("LD_PRELOAD", "TREMOR_LIBDIR")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    check(done.returncode == 0, f"{name}: exit {done.returncode}: {done.stderr[-1500:]}")
replay_folder = os.path.join(options.directory, "replay")
os.makedirs(replay_folder)
target = os.path.join(replay_folder, os.path.basename(options.replay).removesuffix(".gz"))
with gzip.open(options.replay, "rb") as source, open(target, "wb") as sink:
    shutil.copyfileobj(source, sink)
finish("make_runs")
