#!/usr/bin/env python3
"""The fleet campaign, small (issue 52, "Validation"; the full one is
validation/fleet/): 20 generated JSON reports (fleet_campaign_reports.py: the
slow nodes are chosen there) plus 3 real 4-node jobs (UTS namespaces,
fleet_campaign_node.sh; the injector slows n3's rank in each), indexed with
`tremor fleet index`, ranked with `tremor fleet nodes --json`.

usage: fleet_campaign.py --tremor TREMOR --injector LIB --template-run RUN.h5.gz --rank-script rank_nodes.py
                         --fake-node fleet_campaign_node.sh --launcher CMD --preload LIB -- BSP_DEMO

Checks: n3 (slow in 7 of 9 generated runs) is first; n6 (slow once in 10) is
not among the first 3; the independent script (validation/fleet/rank_nodes.py,
from the reports alone) gives the same order and the same scores (1e-9).
Fails a ranking by raw slow share (n8, slow in its only run, would be first:
1 of 1 > 7 of 9), one by slow runs or by lost time alone (n6, slow once,
would be third, above n8 by name or by its run's longer time, where the
share's lower bound puts n5, 2 of 8, above it), and an indexer that drops or
double-counts runs (the counts are compared with the construction).
The real jobs' part needs root (unshare); without it only that part is left
out (capability no-unshare), the generated part still runs.
"""
import argparse
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fleet_campaign_reports import constructed_runs, write_reports
from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded
from nodes import skip_reason

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from recorded_checks import check, failures  # noqa: E402
from tremor_testing import skip_line  # noqa: E402

REAL_JOBS = [["n3", "n1", "n2", "n4"], ["n1", "n3", "n4", "n2"], ["n2", "n4", "n3", "n1"]]
DELAY = {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.5",
         "TREMOR_INJECT_MEAN_US": "15000", "TREMOR_INJECT_SD_US": "3000"}


def template_report(opts, work):
    """What this build's `tremor analyze --json` writes for a recorded run: the current schema."""
    run = os.path.join(work, "template.h5")
    with gzip.open(opts.template_run, "rb") as source, open(run, "wb") as target:
        shutil.copyfileobj(source, target)
    result = subprocess.run([opts.tremor, "analyze", run, "--json"], capture_output=True, text=True, timeout=120)
    if not check(result.returncode == 0, f"tremor analyze of the template: {result.stderr[-800:]}"):
        sys.exit(1)
    os.remove(run)
    return json.loads(result.stdout)


def real_jobs(opts, directory):
    """The 3 real jobs (n3's rank slowed); a list of their report paths."""
    reports = []
    for number, hosts in enumerate(REAL_JOBS):
        out = os.path.join(directory, f"real-{number}")
        os.makedirs(out)
        preload = opts.preload.split()
        preload.insert(len(preload) - 1, opts.injector)  # in front of the profiler: time outside MPI
        env = dict(environment_without_tremor(), LD_PRELOAD=" ".join(preload), TREMOR_OUTPUT_DIR=out,
                   TREMOR_REPORT="json", FLEET_NODE_NAMES="/".join(hosts), TREMOR_INJECT_RANKS=str(hosts.index("n3")),
                   TREMOR_INJECT_SEED=str(number + 1), **DELAY)
        program = [opts.fake_node] + launched_program(opts) + ["-S", "-n", "150", "-u", "2000", "-k", "0", "-q"]
        result = run_preloaded(mpi_command(opts.launcher, len(hosts), program), env, timeout=120)
        found = glob.glob(os.path.join(out, "*.json"))
        if check(result.returncode == 0 and len(found) == 1, f"real job {number}: exit {result.returncode}, "
                                                            f"reports {found}: {result.stderr[-800:]}"):
            reports += found
    return reports


def expected_counts(reports_real):
    """{node: [runs, slow runs at least, slow runs at most]}: the construction, widened by the real jobs
    (whose slow nodes are Tremor's reading of a planted delay, so only bounded here)."""
    counts = {}
    for hosts, slow in constructed_runs():
        for host in hosts:
            entry = counts.setdefault(host, [0, 0, 0])
            entry[0] += 1
            entry[1] += host == slow
            entry[2] += host == slow
    for hosts in REAL_JOBS[:reports_real]:
        for host in hosts:
            counts[host][0] += 1
            counts[host][2] += 1
    return counts


def check_ranking(ranking, counts, source):
    order = [row["node"] for row in ranking]
    print(f"{source}: " + ", ".join(f"{r['node']} {r['slow_runs']}/{r['runs']} {r['score']:+.4f}" for r in ranking))
    check(order[:1] == ["n3"], f"{source}: n3 (slow in 7 of 9 and more) is first, not {order[:1]}")
    check("n6" not in order[:3], f"{source}: n6 (slow once in 10) is not among the first 3: {order[:3]}")
    check(sorted(order) == sorted(counts), f"{source}: the nodes {sorted(order)} are the fleet's {sorted(counts)}")
    for row in ranking:
        runs, least, most = counts.get(row["node"], [0, 0, 0])
        check(row["runs"] == runs and least <= row["slow_runs"] <= most,
              f"{source}: {row['node']} in {row['runs']} runs, slow in {row['slow_runs']}; "
              f"built: {runs}, {least}-{most}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--injector", required=True)
    parser.add_argument("--template-run", required=True)
    parser.add_argument("--rank-script", required=True)
    parser.add_argument("--fake-node", required=True)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tremor-fleet-campaign-") as work:
        fleet = os.path.join(work, "fleet")
        write_reports(template_report(opts, work), os.path.join(fleet, "generated"))
        reason = skip_reason()
        real = [] if reason else real_jobs(opts, os.path.join(fleet, "real"))
        if reason:
            print("the 3 real jobs are left out: " + skip_line("no-unshare", reason).replace("SKIPPED: ", ""))
        counts = expected_counts(len(real) if len(real) == len(REAL_JOBS) else 0)
        raw_first = max(counts, key=lambda n: (counts[n][1] / counts[n][0], n == "n8"))
        check(raw_first == "n8", f"the data put n8 first by raw slow share (the trap), not {raw_first}")

        database = os.path.join(work, "fleet.db")
        index = subprocess.run([opts.tremor, "fleet", "index", fleet, "--db", database], capture_output=True, text=True,
                               timeout=120)
        check(index.returncode == 0, f"tremor fleet index: exit {index.returncode}: {index.stderr[-800:]}")
        nodes = subprocess.run([opts.tremor, "fleet", "nodes", "--db", database, "--json"], capture_output=True,
                               text=True, timeout=60)
        if check(nodes.returncode == 0, f"tremor fleet nodes: exit {nodes.returncode}: {nodes.stderr[-800:]}"):
            tremor_ranking = json.loads(nodes.stdout)
            check_ranking(tremor_ranking, counts, "tremor fleet nodes")
        independent = subprocess.run([sys.executable, opts.rank_script, fleet, "--json"], capture_output=True,
                                     text=True, timeout=60)
        if check(independent.returncode == 0, f"rank_nodes.py: {independent.stderr[-800:]}"):
            own_ranking = json.loads(independent.stdout)
            check_ranking(own_ranking, counts, "rank_nodes.py")
            if nodes.returncode == 0:
                check([r["node"] for r in tremor_ranking] == [r["node"] for r in own_ranking],
                      "tremor fleet nodes and the independent script give the same order")
                for mine, theirs in zip(own_ranking, tremor_ranking):
                    for key in ("runs", "slow_runs"):
                        check(mine[key] == theirs[key],
                              f"{mine['node']} {key}: {mine[key]} here, {theirs[key]} by tremor")
                    for key in ("wilson_low", "baseline_share", "score"):
                        check(abs(mine[key] - theirs[key]) <= 1e-9,
                              f"{mine['node']} {key}: {mine[key]} here, {theirs[key]} by tremor")
    print(f"fleet campaign: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
