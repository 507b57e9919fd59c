#!/usr/bin/python3
"""Generates Tremor JSON reports of a made-up fleet, for `tremor fleet` tests and its benchmark.

Each report carries the fields `tremor fleet index` reads (run_id, start_utc,
hosts, application, run_time_s, lost_percent, stragglers, diagnosis; see
docs/fleet.md), with the values of a made-up run: `--nodes-per-run` hosts
drawn from a pool of `--pool` names, one run per `--interval-s` from
`--start`. A node named in --slow NODE=P is the one the others waited for in
a share P of the runs that use it; any other run names a random node of the
run with probability --noise. Seeded: the same arguments write the same files.

    fleet_generate.py OUT_DIR --runs 100000 --nodes-per-run 64 --pool 1024 [--slow n0003=0.7]
"""

import argparse
import calendar
import json
import os
import random
import sys
import time

APPLICATIONS = ("lulesh", "nwchem", "amg", "hpcg")


def node_name(index):
    return f"n{index:04d}"


def report(index, hosts, slow, rng, start_unix, application):
    """One report: `slow` is the host the others waited for, or None."""
    run_time = round(rng.uniform(60.0, 600.0), 3)
    lost = round(rng.uniform(0.5, 4.0) + (rng.uniform(5.0, 20.0) if slow else 0.0), 3)
    lost_s = run_time * lost / 100.0
    waits = [{"node_id": hosts.index(slow), "hostname": slow, "segments": 40, "impact_s": round(lost_s * 0.8, 3)}] if slow else []
    extra = rng.sample(hosts, 2)
    waits += [{"node_id": hosts.index(h), "hostname": h, "segments": 3, "impact_s": round(lost_s * 0.05, 3)}
              for h in extra if h != slow]
    seconds = int(start_unix)
    utc = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(round((start_unix - seconds) * 1000)) % 1000:03d}Z"
    ranks_per_node = 4
    slow_ranks = [{"rank": hosts.index(slow) * ranks_per_node, "node": hosts.index(slow), "hostname": slow,
                   "lost_percent": lost * 0.8, "kind": "slow"}] if slow else []
    return {
        "schema_version": 1,
        "tremor_version": "0.7.0",
        "output_file": f"{application}-{index}.h5",
        "run_id": utc.replace("-", "").replace(":", "") + f"-{hosts[0]}-{len(hosts) * ranks_per_node}",
        "start_utc": utc,
        "hosts": hosts,
        "application": application,
        "job": None,
        "estimate_possible": True,
        "lost_percent": lost,
        "run_time_s": run_time,
        "world_size": len(hosts) * ranks_per_node,
        "node_count": len(hosts),
        "stragglers": {"nodes": waits,
                       "ranks": [{"rank": hosts.index(w["hostname"]) * ranks_per_node, "node_id": w["node_id"],
                                  "hostname": w["hostname"], "segments": w["segments"], "impact_s": w["impact_s"]}
                                 for w in waits]},
        "diagnosis": {"slow_ranks": slow_ranks,
                      "slow_nodes": [{"node": hosts.index(slow), "hostname": slow, "ranks": [0], "lost_percent": lost * 0.8,
                                      "kind": "slow"}] if slow else []},
    }


def generate(out_dir, runs, nodes_per_run, pool, slow=None, noise=0.02, seed=1, start=calendar.timegm((2026, 11, 1, 0, 0, 0)),
             interval_s=60.0, per_directory=1000):
    """Writes `runs` reports under out_dir (subdirectories of per_directory files); returns their paths."""
    slow = slow or {}
    rng = random.Random(seed)
    names = [node_name(i) for i in range(pool)]
    paths = []
    for index in range(runs):
        hosts = sorted(rng.sample(names, nodes_per_run))
        planted = [h for h in hosts if h in slow and rng.random() < slow[h]]
        culprit = planted[0] if planted else (rng.choice(hosts) if rng.random() < noise else None)
        application = APPLICATIONS[index % len(APPLICATIONS)]
        directory = os.path.join(out_dir, f"d{index // per_directory:04d}")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"{application}-{index}.json")
        with open(path, "w") as out:
            json.dump(report(index, hosts, culprit, rng, start + index * interval_s, application), out)
        paths.append(path)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--nodes-per-run", type=int, default=64)
    parser.add_argument("--pool", type=int, default=1024)
    parser.add_argument("--slow", action="append", default=[], metavar="NODE=P")
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--interval-s", type=float, default=60.0)
    args = parser.parse_args()
    slow = {name: float(share) for name, share in (item.split("=", 1) for item in args.slow)}
    paths = generate(args.out_dir, args.runs, args.nodes_per_run, args.pool, slow, args.noise, args.seed,
                     interval_s=args.interval_s)
    print(f"{len(paths)} reports in {args.out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
