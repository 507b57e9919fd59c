#!/usr/bin/env python3
"""Several nodes on one machine (issue 35): each rank runs in its own UTS
namespace named node-N (fake_node.sh), ranks dealt round-robin over the
nodes (rank r on node r mod K, local rank r div K), so Tremor sees K nodes
through the code path it takes on a cluster. The truth is the layout chosen
here, never Tremor's output.

usage: nodes.py --case CASE --nodes K --launcher CMD --np N --preload LIB --tremor TREMOR
                --fake-node fake_node.sh -- BSP_DEMO
CASE:
  layout     /ranks holds every rank's host name, node id and local rank of
             the layout; node_count is K; the predictions have the inter-node
             variant (and the intra-node one with 2 ranks or more per node),
             and rewriting the file's layout to one node changes them
             (`tremor analyze`), so they read it; turbo reads as on only on
             node-1 and the environment warning names node-1 and no other
  slow-node  node-2's ranks are bound to CPU 1 beside CPU hogs, the others to
             CPU 0: node-2 is the first of diagnosis.slow_nodes, with the
             number of ranks the layout put on it
Needs root (unshare); without it, or where unshare is refused, the test is
skipped for capability no-unshare (test/common/capabilities.py).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded
from robustness import finish  # same folder: the shared verdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from tremor_testing import skip_for  # noqa: E402
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def skip_reason():
    if os.geteuid() != 0:
        return "needs root: each rank gets its own UTS namespace (unshare --uts --mount)"
    probe = subprocess.run(["unshare", "--uts", "--mount", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare --uts --mount is refused here: {probe.stderr.strip()}"
    return None


def run_job(opts, out, extra_env, program_args):
    env = dict(environment_without_tremor(), LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="json",
               FAKE_NODES=str(opts.nodes), **extra_env)
    program = [opts.fake_node] + launched_program(opts) + program_args
    result = run_preloaded(mpi_command(opts.launcher, opts.np, program), env, timeout=240)
    if not check(result.returncode == 0, f"exit {result.returncode}: {result.stderr[-1500:]}"):
        return None
    runs = glob.glob(os.path.join(out, "*.h5"))
    if not check(len(runs) == 1, f"expected one run file, found {runs}"):
        return None
    with open(runs[0][:-3] + ".json") as f:
        return runs[0], json.load(f)


def layout_case(opts, out):
    found = run_job(opts, out, {"FAKE_TURBO_NODE": "1"}, ["-S", "-n", "120", "-u", "1000", "-b", "64", "-k", "0", "-q"])
    if found is None:
        return
    path, report = found
    k = opts.nodes
    with h5py.File(path, "r") as f:
        hosts = [text(h) for h in f["ranks/hostname"][:]]
        node_ids = list(f["ranks/node_id"][:])
        local = list(f["ranks/local_rank"][:])
    check(hosts == [f"node-{r % k}" for r in range(opts.np)], f"host names {hosts}")
    check(node_ids == [r % k for r in range(opts.np)], f"node ids {node_ids}")
    check(local == [r // k for r in range(opts.np)], f"local ranks {local}")
    check(report["node_count"] == k, f"node_count {report['node_count']} != {k}")
    methods = {p["method"] for p in report["predictions"]}
    check("pwm-internode" in methods, f"no inter-node prediction: {sorted(methods)}")
    if opts.np > k:
        check("pwm-intranode" in methods, f"no intra-node prediction: {sorted(methods)}")
    print(f"layout: hosts {hosts}, node ids {node_ids}, local ranks {local}; predictions {sorted(methods)}")

    # The per-node variants read the layout: the same run with its ranks
    # put on one node loses the inter-node variant and changes the others.
    one_node = os.path.join(out, "one-node.h5")
    shutil.copy(path, one_node)
    with h5py.File(one_node, "r+") as f:
        del f["analysis"]
        f["ranks/node_id"][...] = np.zeros(opts.np, dtype=f["ranks/node_id"].dtype)
        f["ranks/local_rank"][...] = np.arange(opts.np, dtype=f["ranks/local_rank"].dtype)
        f["ranks/hostname"][...] = np.array([b"node-0"] * opts.np, dtype=f["ranks/hostname"].dtype)
    again = subprocess.run([opts.tremor, "analyze", one_node, "--json"], capture_output=True, text=True, timeout=120)
    if check(again.returncode == 0, f"tremor analyze failed: {again.stderr[-500:]}"):
        rewritten = {(p["method"], p["factor"]): p["median_s"] for p in json.loads(again.stdout)["predictions"]}
        original = {(p["method"], p["factor"]): p["median_s"] for p in report["predictions"]}
        check(not any(m == "pwm-internode" for m, _ in rewritten), "one node still has an inter-node prediction")
        if opts.np > k:
            changed = [key for key in original if key[0] == "pwm-intranode" and rewritten.get(key) != original[key]]
            check(changed, "the intra-node prediction does not depend on the ranks' local indices")

    turbo = [w["message"] for w in report["warnings"] if w["code"] == "environment_turbo"]
    named = sorted({f"node-{n}" for n in range(k) if any(f"node-{n}" in m for m in turbo)})
    check(named == ["node-1"], f"turbo warning should name node-1 only: {turbo}")
    print(f"environment: turbo warning {turbo}")


def slow_node_case(opts, out):
    slow = 2
    cpus = "/".join("1" if n == slow else "0" for n in range(opts.nodes))
    # Two busy processes on CPU 1 take most of it from node-2's ranks, which
    # the others then wait for at every boundary.
    hogs = [subprocess.Popen(["taskset", "-c", "1", sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        found = run_job(opts, out, {"FAKE_NODE_CPUS": cpus},
                        ["-S", "-n", "200", "-u", "2000", "-b", "64", "-k", "0", "-q"])
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    if found is None:
        return
    _, report = found
    diagnosis = report.get("diagnosis") or {}
    nodes = diagnosis.get("slow_nodes") or []
    print(f"slow nodes: {[(n['hostname'], n['ranks'], round(n['lost_percent'], 2)) for n in nodes]}; "
          f"interference {report.get('interference_percent')}")
    expected_ranks = [r for r in range(opts.np) if r % opts.nodes == slow]
    if check(nodes, "no slow node named"):
        first = nodes[0]
        check(first["hostname"] == f"node-{slow}" and first["node"] == slow,
              f"first slow node is {first['hostname']} (id {first['node']}), expected node-{slow}")
        check(first["ranks"] == len(expected_ranks), f"slow node holds {first['ranks']} ranks, not {expected_ranks}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=["layout", "slow-node"])
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--fake-node", required=True)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    reason = skip_reason()
    if reason:
        skip_for("no-unshare", reason)
    with tempfile.TemporaryDirectory(prefix="tremor-nodes-") as out:
        if opts.case == "layout":
            layout_case(opts, out)
        else:
            slow_node_case(opts, out)
    finish(opts.case, failures)


if __name__ == "__main__":
    main()
