#!/usr/bin/python3
"""Benchmark of `tremor fleet` (docs/fleet.md, "Scale"): generates reports,
times `tremor fleet index` over them and `tremor fleet nodes` on the result,
and reports the database's size per run.

    bench_fleet.py --tremor build-mpich/estimators/tremor [--runs 100000] [--nodes-per-run 64] [--work DIR]

Reports already in WORK/reports with the same count are reused (generating
10^5 takes minutes). Prints one line per figure.
"""

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_generate  # noqa: E402


def timed(command):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    return elapsed, done


def database_bytes(path):
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--runs", type=int, default=100000)
    parser.add_argument("--nodes-per-run", type=int, default=64)
    parser.add_argument("--pool", type=int, default=1024)
    parser.add_argument("--work", default="/tmp/tremor-fleet-bench")
    args = parser.parse_args()
    reports = os.path.join(args.work, "reports")
    marker = os.path.join(args.work, f"generated-{args.runs}-{args.nodes_per_run}-{args.pool}")
    if not os.path.exists(marker):
        start = time.perf_counter()
        fleet_generate.generate(reports, args.runs, args.nodes_per_run, args.pool, slow={"n0003": 0.7})
        open(marker, "w").close()
        print(f"generate: {args.runs} reports of {args.nodes_per_run} nodes in {time.perf_counter() - start:.1f} s")
    db = os.path.join(args.work, "fleet.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    elapsed, done = timed([args.tremor, "fleet", "index", reports, "--db", db])
    print(f"index: {args.runs} reports in {elapsed:.1f} s ({done.stderr.strip().splitlines()[-1]})")
    size = database_bytes(db)
    print(f"database as indexed: {size} bytes, {size / args.runs:.0f} bytes per run of {args.nodes_per_run} nodes")
    again, _ = timed([args.tremor, "fleet", "index", reports, "--db", db])
    print(f"index again (replaces every run): {again:.1f} s")
    subprocess.run(["sqlite3", db, "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;"], check=False, capture_output=True)
    size = database_bytes(db)
    print(f"database after indexing again and VACUUM: {size} bytes, {size / args.runs:.0f} bytes per run")
    for _ in range(3):
        elapsed, done = timed([args.tremor, "fleet", "nodes", "--db", db])
        print(f"nodes: {len(done.stdout.splitlines()) - 1} nodes ranked in {elapsed:.2f} s")
    elapsed, _ = timed([args.tremor, "fleet", "nodes", "--db", db, "--since", "2026-11-20"])
    print(f"nodes --since 2026-11-20: {elapsed:.2f} s")


if __name__ == "__main__":
    main()
