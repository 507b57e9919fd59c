"""Generated JSON reports for the small fleet campaign (fleet_campaign.py):
reports of the current schema, each a copy of a real report (TEMPLATE, what
this build's `tremor analyze --json` writes) with the run's identity, hosts
and timing, and the slow node chosen here. The truth comes from construction.
"""
import copy
import json
import os

# The constructed fleet: (hosts in rank order, the slow node or None) per run.
# n3 is slow in 7 of its 9 runs, n8 in its only run (a ranking by raw slow
# share puts n8 first: 1 of 1 > 7 of 9), n5 in 2 of 8 and n6 in 1 of 10 (n6
# is not among the first 3: n3, n8 and n5 stand above it); n1, n2, n4, n7 never.
FILLERS = ["n1", "n2", "n4", "n7"]


def constructed_runs():
    runs = []
    for index in range(20):
        if index < 9:
            own, slow = ["n3"], "n3" if index < 7 else None
        elif index == 9:
            own, slow = ["n8"], "n8"
        else:
            own = ["n6"] + (["n5"] if 11 <= index <= 18 else [])
            slow = "n6" if index == 10 else ("n5" if index in (11, 12) else None)
        hosts = own + [FILLERS[(index + k) % len(FILLERS)] for k in range(4 - len(own))]
        runs.append((hosts[index % 4:] + hosts[:index % 4], slow))
    return runs


def write_report(template, directory, index, hosts, slow):
    """One report: `hosts` one rank each, `slow` the node the others waited for (lost 12 % of 30 s)."""
    report = copy.deepcopy(template)
    run_time, lost_percent = 30.0 + index, (12.0 if slow else 1.0)
    start = f"2026-12-{1 + index % 7:02d}T{10 + index % 8:02d}:00:00.000Z"
    stem = f"generated-{index:02d}"
    report.update(output_file=os.path.join(directory, stem + ".h5"), run_time_s=run_time, lost_percent=lost_percent,
                  interference_percent=lost_percent, world_size=len(hosts), node_count=len(hosts), job=None)
    if "run_id" in template:
        report["run_id"] = start.replace("-", "").replace(":", "") + f"-{hosts[0]}-{len(hosts)}-{stem}"
    for key, value in (("start_utc", start), ("hosts", list(hosts)), ("application", "generated_app")):
        if key in template:
            report[key] = value
    waits = [{"node_id": n, "hostname": h, "segments": 30 if h == slow else 2,
              "impact_s": round(run_time * (lost_percent if h == slow else 0.2) / 100, 3)} for n, h in enumerate(hosts)]
    waits.sort(key=lambda w: -w["impact_s"])
    report["stragglers"] = {"nodes": waits, "ranks": [dict(w, rank=w["node_id"]) for w in waits]}
    diagnosis = report.get("diagnosis") or {}
    named = [{"node": hosts.index(slow), "hostname": slow, "ranks": 1, "lost_percent": lost_percent, "last_share": 0.9,
              "last_segments": 30, "kind": "slow", "time_ratio": 1.5, "work_ratio": 1.0}] if slow else []
    diagnosis.update(slow_nodes=named, slow_ranks=[dict(n, rank=n["node"]) for n in named],
                     ranks={"lost_percent": [lost_percent if h == slow else 0.0 for h in hosts],
                            "imbalance_percent": [0.0] * len(hosts), "work_ratio": [1.0] * len(hosts)})
    report["diagnosis"] = diagnosis
    path = os.path.join(directory, stem + ".json")
    with open(path, "w") as handle:
        json.dump(report, handle, indent=1)
    return path


def write_reports(template, directory):
    """Writes the constructed runs' reports under `directory`; returns [(path, hosts, slow)]."""
    os.makedirs(directory, exist_ok=True)
    return [(write_report(template, directory, i, hosts, slow), hosts, slow)
            for i, (hosts, slow) in enumerate(constructed_runs())]
