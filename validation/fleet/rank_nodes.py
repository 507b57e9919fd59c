#!/usr/bin/python3
"""An independent ranking of the fleet's nodes from Tremor's JSON reports alone
(issue 52, "Validation"): its own code, written from the rule in docs/fleet.md,
never Tremor's package or executable, so that `tremor fleet nodes` can be
checked against it.

    validation/fleet/rank_nodes.py PATH... [--json]

PATH: JSON reports, or directories searched recursively for them (a .json
file that is not a Tremor report is skipped and named on stderr).
Per node: the runs that used it, the runs in which the report's diagnosis
names it among the slow nodes (diagnosis.slow_nodes), the time those runs
waited for it (its stragglers.nodes impact_s, summed), its slow share, the lower
bound of the 95 % Wilson interval of that share (at least 0), the fleet's
baseline share (slow node-runs over all node-runs) and the score: Wilson lower
bound minus the baseline share. Sorted by score, highest first; ties by more
slow runs, then by node name.
A run's nodes: the report's `hosts` where it has them, otherwise (reports of
Tremor 0.6) every node its stragglers or diagnosis name. A run is keyed by
its scheduler job (job.scheduler:job.id), else its run_id, else its run file:
reports of the same run count once.
"""
import argparse
import json
import math
import os
import sys

Z_95 = 1.959963984540054  # the standard normal's 97.5 % quantile


def wilson_lower_bound(successes, trials, z=Z_95):
    if trials == 0:
        return 0.0
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = share + z * z / (2 * trials)
    spread = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    return max(0.0, (centre - spread) / denominator)


def report_files(paths):
    for path in paths:
        if os.path.isdir(path):
            for folder, _, names in sorted(os.walk(path)):
                for name in sorted(names):
                    if name.endswith(".json"):
                        yield os.path.join(folder, name)
        else:
            yield path


def host_names(entries):
    return {entry["hostname"] for entry in entries or [] if isinstance(entry, dict) and entry.get("hostname")}


def run_nodes(report):
    """Every node the run used, as far as the report tells."""
    listed = report.get("hosts")
    if isinstance(listed, list) and listed:
        return {entry if isinstance(entry, str) else entry.get("hostname") for entry in listed} - {None}
    diagnosis = report.get("diagnosis") or {}
    stragglers = report.get("stragglers") or {}
    return (host_names(stragglers.get("nodes")) | host_names(stragglers.get("ranks"))
            | host_names(diagnosis.get("slow_nodes")) | host_names(diagnosis.get("slow_ranks")))


def read_runs(paths):
    """{run key: (nodes, {slow node: seconds waited for it})}; reports of the same run count once."""
    runs = {}
    for path in report_files(paths):
        try:
            with open(path) as handle:
                report = json.load(handle)
            if not isinstance(report, dict) or "tremor_version" not in report or "run_time_s" not in report:
                raise ValueError("not a Tremor report")
        except (OSError, ValueError) as error:
            print(f"skipped {path}: {error}", file=sys.stderr)
            continue
        job = report.get("job") if isinstance(report.get("job"), dict) else {}
        job_key = f"{job.get('scheduler') or 'job'}:{job['id']}" if job.get("id") else None
        key = job_key or report.get("run_id") or report.get("output_file") or os.path.abspath(path)
        stragglers = (report.get("stragglers") or {}).get("nodes") or []
        waits = {node.get("hostname"): node.get("impact_s") or 0.0 for node in stragglers}
        slow = {node["hostname"]: waits.get(node["hostname"], 0.0)
                for node in (report.get("diagnosis") or {}).get("slow_nodes") or []}
        runs[key] = (run_nodes(report) | set(slow), slow)
    return runs


def rank(runs):
    table = {}
    for nodes, slow in runs.values():
        for node in nodes:
            row = table.setdefault(node, {"node": node, "runs": 0, "slow_runs": 0, "lost_s": 0.0})
            row["runs"] += 1
            if node in slow:
                row["slow_runs"] += 1
                row["lost_s"] += slow[node]
    node_runs = sum(row["runs"] for row in table.values())
    baseline = sum(row["slow_runs"] for row in table.values()) / node_runs if node_runs else 0.0
    for row in table.values():
        row["slow_share"] = row["slow_runs"] / row["runs"]
        row["wilson_low"] = wilson_lower_bound(row["slow_runs"], row["runs"])
        row["baseline_share"] = baseline
        row["score"] = row["wilson_low"] - baseline
    return sorted(table.values(), key=lambda row: (-row["score"], -row["slow_runs"], row["node"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--json", action="store_true", help="a JSON array, as `tremor fleet nodes --json`")
    opts = parser.parse_args()
    runs = read_runs(opts.paths)
    ranking = rank(runs)
    if opts.json:
        json.dump(ranking, sys.stdout, indent=1)
        print()
        return 0
    print(f"{len(runs)} runs, baseline share {ranking[0]['baseline_share'] if ranking else 0:.4f}")
    print("| node | runs | slow runs | slow share | Wilson 95 % low | score | lost s |")
    print("|---|---|---|---|---|---|---|")
    for row in ranking:
        print(f"| {row['node']} | {row['runs']} | {row['slow_runs']} | {row['slow_share']:.3f} "
              f"| {row['wilson_low']:.4f} | {row['score']:+.4f} | {row['lost_s']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
