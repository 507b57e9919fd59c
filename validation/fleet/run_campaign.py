#!/usr/bin/python3
"""The fleet campaign (issue 52, "Validation"): many short real MPI jobs, 4
"nodes" each, the nodes drawn from 8 names, one node slowed in 70 % of the
jobs that use it and another slowed in exactly one job. Each job writes its
run file and JSON report into its own directory, named by its job id.

    validation/fleet/run_campaign.py --build build-mpich [--jobs 72] [--seed 52] [--background 0.25]
                                     [--output validation/fleet/results]

Nodes: each rank runs in a UTS namespace with its node's host name
(test/integration/fleet_campaign_node.sh, as fake_node.sh does for the node
tests), one rank per node, so Tremor sees 4 nodes through the code path it
takes on a cluster. Needs root (unshare).
Slowing: the injector (libtremor-inject, preloaded in front of the profiler)
sleeps the slowed node's rank before half of its collectives (15 +- 3 ms):
time outside MPI that the other ranks wait for. The truth is the injector's
logs (which ranks it delayed), never Tremor's output.
Background (--background P, default 0): with probability P a job has one more
node, drawn from its others (never the slow or the once-slowed node, so that
those are slowed exactly as planted), slowed alike: a fleet where any node is
slow now and then, which the once-slowed node should not stand out from.
Workload: the bundled demo, 150 iterations of 2 ms of sleep (-S: the ranks
leave the two CPUs to the machine's other work) and a collective each,
MPICH, the job at nice 5.
Writes OUTPUT/jobs/<job id>/ (run file, report, injector logs), OUTPUT/jobs.csv
(one row per job: its nodes in rank order, the planted node, the nodes the
injector's logs show delayed, what the report names) and OUTPUT/campaign.json
(seed, command, commit, date, machine).
"""
import argparse
import csv
import glob
import json
import os
import platform
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.normpath(os.path.join(HERE, "..", ".."))
NODE_WRAPPER = os.path.join(REPOSITORY, "test", "integration", "fleet_campaign_node.sh")
NAMES = [f"n{i}" for i in range(1, 9)]
NODES_PER_JOB = 4
DEMO_ARGUMENTS = ["-S", "-n", "150", "-u", "2000", "-k", "0", "-q"]
DELAY = {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.5",
         "TREMOR_INJECT_MEAN_US": "15000", "TREMOR_INJECT_SD_US": "3000"}
PRIORITY = ["nice", "-n", "5"]
COLUMNS = ["job_id", "nodes", "planted_node", "background_node", "delayed_nodes", "injected_s", "exit", "report",
           "run_time_s", "named_slow_nodes", "wall_s"]


def plan(seed, jobs, slow_node, slow_share, once_node, background=0.0):
    """Each job's nodes in rank order, its planted node (or None) and its
    background node (or None), from the seed alone. Background: with
    probability `background` a job has one more node slowed alike, drawn from
    its other nodes but never the slow or the once-slowed node, which stay
    slowed as planted (70 % of their jobs, once); drawn apart, so that the
    layouts and planted nodes do not depend on it."""
    rng = random.Random(seed)
    layouts = [rng.sample(NAMES, NODES_PER_JOB) for _ in range(jobs)]
    with_slow = [j for j, nodes in enumerate(layouts) if slow_node in nodes]
    planted = {j: slow_node for j in rng.sample(with_slow, round(slow_share * len(with_slow)))}
    with_once = [j for j, nodes in enumerate(layouts) if once_node in nodes and j not in planted]
    planted[rng.choice(with_once)] = once_node
    noise = random.Random(seed + 1)
    extra = {}
    for j, nodes in enumerate(layouts):
        if noise.random() < background:
            others = [n for n in nodes if n != planted.get(j) and n not in (slow_node, once_node)]
            if others:
                extra[j] = noise.choice(others)
    return [(f"job-{j + 1:04d}", nodes, planted.get(j), extra.get(j)) for j, nodes in enumerate(layouts)]


def delayed_nodes(directory, nodes):
    """The nodes whose rank the injector's logs hold a delay for, and the summed delay in seconds."""
    delayed, total_us = set(), 0.0
    for log in glob.glob(os.path.join(directory, "tremor-inject_*.csv")):
        with open(log, newline="") as handle:
            for row in csv.DictReader(handle):
                if float(row["spent_us"]) > 0:
                    delayed.add(nodes[int(row["rank"])])
                    total_us += float(row["spent_us"])
    return sorted(delayed), total_us / 1e6


def relative_output_file(report_path, output):
    """The report names its run file relative to OUTPUT (a campaign's files are
    kept in the repository, which names no path of the machine that ran them)."""
    with open(report_path) as handle:
        report = json.load(handle)
    if os.path.isabs(report.get("output_file") or ""):
        report["output_file"] = os.path.relpath(report["output_file"], output)
        with open(report_path, "w") as handle:
            json.dump(report, handle, indent=2, sort_keys=True)
            handle.write("\n")
    return report


def run_job(build, job_id, nodes, slowed, seed, output):
    """`slowed`: (planted node or None, background node or None)."""
    planted, background = slowed
    directory = os.path.join(output, "jobs", job_id)
    os.makedirs(directory, exist_ok=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TREMOR_", "FAKE_", "FLEET_"))}
    env.update(TREMOR_OUTPUT_DIR=directory, TREMOR_REPORT="json", FLEET_NODE_NAMES="/".join(nodes),
               LD_PRELOAD=" ".join([os.path.join(build, "injector", "libtremor-inject-mpich.so"),
                                    os.path.join(build, "interpose", "libtremor-mpich.so")]))
    delayed_ranks = [str(nodes.index(node)) for node in slowed if node]
    if delayed_ranks:
        env.update(DELAY, TREMOR_INJECT_RANKS=",".join(delayed_ranks), TREMOR_INJECT_SEED=str(seed))
    demo = os.path.join(build, "test", "integration", "bsp_demo")
    command = PRIORITY + ["mpiexec.mpich", "-n", str(len(nodes)), NODE_WRAPPER, demo] + DEMO_ARGUMENTS
    start = time.monotonic()
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=180)
    wall = time.monotonic() - start
    reports = glob.glob(os.path.join(directory, "*.json"))
    row = {"job_id": job_id, "nodes": " ".join(nodes), "planted_node": planted or "",
           "background_node": background or "", "exit": result.returncode,
           "wall_s": f"{wall:.2f}", "report": "", "run_time_s": "", "named_slow_nodes": ""}
    delayed, injected = delayed_nodes(directory, nodes)
    row.update(delayed_nodes=" ".join(delayed), injected_s=f"{injected:.3f}")
    if result.returncode != 0 or len(reports) != 1:
        sys.stderr.write(f"{job_id}: exit {result.returncode}, reports {reports}: {result.stderr[-800:]}\n")
        return row
    report = relative_output_file(reports[0], output)
    named = [n["hostname"] for n in (report.get("diagnosis") or {}).get("slow_nodes") or []]
    row.update(report=os.path.relpath(reports[0], output), run_time_s=f"{report['run_time_s']:.3f}",
               named_slow_nodes=" ".join(named))
    return row


def machine():
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    mpich = subprocess.run(["mpichversion"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"host": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(),
            "load_average": " ".join(load), "mpi": " ".join(mpich.split())}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="an MPICH build (tremor_preload tremor_inject bsp_demo)")
    parser.add_argument("--jobs", type=int, default=72)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--output", default=os.path.join(HERE, "results"))
    parser.add_argument("--slow-node", default="n3")
    parser.add_argument("--slow-share", type=float, default=0.7)
    parser.add_argument("--once-node", default="n6")
    parser.add_argument("--background", type=float, default=0.0,
                        help="probability that a job has one more node slowed (default 0: none)")
    opts = parser.parse_args()
    build, output = os.path.abspath(opts.build), os.path.abspath(opts.output)
    if os.path.exists(os.path.join(output, "jobs")):
        raise SystemExit(f"{output}/jobs exists: move it away first (a campaign is never appended to)")
    os.makedirs(output, exist_ok=True)
    commit = subprocess.run(["git", "-C", REPOSITORY, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    facts = {"command": " ".join([os.path.relpath(sys.argv[0], REPOSITORY)] + sys.argv[1:]), "seed": opts.seed,
             "jobs": opts.jobs, "slow_node": opts.slow_node, "slow_share": opts.slow_share,
             "once_node": opts.once_node, "background": opts.background, "commit": commit.strip(),
             "demo_arguments": DEMO_ARGUMENTS, "delay": DELAY,
             "start_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine_at_start": machine()}
    rows = []
    jobs = plan(opts.seed, opts.jobs, opts.slow_node, opts.slow_share, opts.once_node, opts.background)
    for number, (job_id, nodes, planted, background) in enumerate(jobs):
        rows.append(run_job(build, job_id, nodes, (planted, background), opts.seed * 1000 + number, output))
        print(f"{job_id} nodes {rows[-1]['nodes']} planted {planted or '-'} background {background or '-'} "
              f"named {rows[-1]['named_slow_nodes'] or '-'}"
              f" ({rows[-1]['wall_s']} s)", flush=True)
    facts.update(end_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), machine_at_end=machine(),
                 failed_jobs=[r["job_id"] for r in rows if r["exit"] != 0 or not r["report"]],
                 truth_differs=[r["job_id"] for r in rows if r["delayed_nodes"].split()
                                != sorted(n for n in (r["planted_node"], r["background_node"]) if n)])
    with open(os.path.join(output, "jobs.csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(output, "campaign.json"), "w") as handle:
        json.dump(facts, handle, indent=1)
        handle.write("\n")
    print(f"{len(rows)} jobs, failed {facts['failed_jobs']}, truth differs from the plan in {facts['truth_differs']}")
    return 1 if facts["failed_jobs"] or facts["truth_differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
