#!/usr/bin/python3
"""What the replays read if a segment's time were the global exit-to-exit
time instead of the maximum of the ranks' own durations.

A rank delayed inside a closing collective ends that segment late (its own
duration) and makes the others wait in the next one (theirs): the maxima over
ranks count that delay twice (docs/accuracy.md, Known defects). With every
rank in /detail, each rank's cumulative duration gives its exit time from
every boundary; the global time of segment k is max_r C_r(k) - max_r C_r(k-1),
and these sum to the run time. This copies the replays, rewrites
/segments/duration_s so, and runs the replay check on the copy: a preview of
that change to the model, not a held-out result.

    global_segment_time.py --tremor BUILD/estimators/tremor [--keep DIR]
"""
import argparse
import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPLAYS = os.path.join(HERE, "..", "..", "test", "data", "replays")


def rewrite(path):
    with h5py.File(path, "r+") as run:
        detail, bins = run["detail"], run["bins"]
        if len(detail["ranks"]) != int(run.attrs["world_size"]):
            raise SystemExit(f"{path}: /detail holds a sample of the ranks; exit times need every rank")
        durations = bins["duration"]["value"][:][detail["duration"][:]]
        exits = np.cumsum(durations, axis=1).max(axis=0)
        run["segments/duration_s"][...] = np.diff(np.concatenate([[0.0], exits]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--keep", help="keep the rewritten replays in this new folder")
    args = parser.parse_args()
    os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"
    scratch = tempfile.mkdtemp(prefix="global-segment-time-")
    data = os.path.join(scratch, "replays")
    shutil.copytree(REPLAYS, data)
    for packed in glob.glob(os.path.join(data, "*", "*", "*.h5.gz")):
        plain = packed[:-3]
        with gzip.open(packed) as source, open(plain, "wb") as sink:
            shutil.copyfileobj(source, sink)
        rewrite(plain)
        with open(plain, "rb") as source, gzip.open(packed, "wb") as sink:
            shutil.copyfileobj(source, sink)
        os.unlink(plain)
    status = 0
    for workload in sorted(os.listdir(data)):
        if os.path.isdir(os.path.join(data, workload)):
            status |= subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "test", "campaigns", "replay_check.py"),
                                      "--tremor", args.tremor, "--data", data, "--only", workload]).returncode
    if args.keep:
        shutil.move(data, args.keep)
    shutil.rmtree(scratch, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
