#!/usr/bin/python3
""""Where" campaign (issue 48): does the diagnosis name the rank or node that
was delayed, and no one when nothing was?

Workload: the bundled bulk-synchronous demo (bsp_demo, 400 iterations of 2 or
4 ms of compute, a fixed number of compute units per microsecond). Cases:

  clean2, clean4     nothing planted, 2 or 4 ranks on one node
  rank2, rank4       one rank (run number mod ranks) delayed: the injector in
                     front of the profiler sleeps 3 +- 1 ms before half of
                     its collectives (time outside MPI, as a descheduled rank
                     would show): about 0.6 s, half the intrinsic run
  clean_nodes2/4     2 or 4 ranks on 2 UTS "nodes" (fake_node.sh; rank r on
                     node r mod 2), node i's ranks bound to CPU i
  hog_nodes2/4       the same, with 3 busy loops beside each rank of node
                     (run number mod 2), bound to its CPU, in the rank's
                     session (fake_node.sh): a CPU hog on one node
  delay_nodes2/4     the same layout, the delays of rankN on every rank of
                     node (run number mod 2)

Truth: the planted rank is the one the injector's logs hold delays for (it
must be the only one); the hog's node is the layout chosen here. Never
Tremor's output. A planted run is right when the planted rank (node) is the
first named in diagnosis.slow_ranks (slow_nodes); a clean run is a false
naming when it names any rank or node.

Each run is analysed by `tremor analyze --json` of the build; the per-rank
charges of every clean run are kept, so the naming threshold can be derived
from runs that are not reported (--stage calibrate, validation/where/
threshold.py) and then checked on new runs (--stage campaign).

usage: where_campaign.py --build MPICH_BUILD [--openmpi-build OMPI_BUILD] [--cases c1,c2]
                         [--runs N] [--output DIR] [--stage campaign|calibrate] [--check] [--busy N] [--keep NEWDIR]
4-rank cases run on --openmpi-build when given (Open MPI yields when
oversubscribed; MPICH busy-polls), else on MPICH. The node cases need root
(unshare). --check exits 1 unless the planted cases are right in at least
90 % of their runs and the clean ones name someone in at most 5 % (in CI:
one run per case, so every run must be right).
Writes DIR/runs.csv and DIR/summary.md and prints the summary.
"""
import argparse
import csv
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPOSITORY, "validation", "campaigns"))
sys.path.insert(0, os.path.join(REPOSITORY, "test", "common"))
import injected_truth  # noqa: E402
from tremor_testing import skip_for  # noqa: E402

import h5py  # noqa: E402

ITERATIONS = ["-n", "400", "-u", "2000", "-k", "0", "-q"]
DELAY = {"TREMOR_INJECT_CALLS": "coll", "TREMOR_INJECT_PROBABILITY": "0.5",
         "TREMOR_INJECT_MEAN_US": "3000", "TREMOR_INJECT_SD_US": "1000"}
# Busy loops beside each rank of the hogged node, started by fake_node.sh in
# the rank's session (the kernel shares a CPU between sessions first), at
# the rank's priority and bound to its CPU: the rank keeps a quarter of its
# share. Hogs started here would take what this script's session is given:
# half the CPU from a login shell, all but 1/258 of it from a CI runner's.
HOGS = 3
# The job runs at this priority, above the machine's other work (nice 0).
PRIORITY = ["nice", "-n", "-20"]
# A run takes 3-17 s; one that takes this long has hung: its ranks are listed
# and ended, so that no busy-polling rank outlives the campaign.
RUN_TIMEOUT_S = 120
NODES = 2
# case: (ranks, on UTS nodes, planted: None | "rank" | "node")
CASES = {
    "clean2": (2, False, None), "rank2": (2, False, "rank"),
    "clean_nodes2": (2, True, None), "hog_nodes2": (2, True, "node"), "delay_nodes2": (2, True, "node delays"),
    "clean4": (4, False, None), "rank4": (4, False, "rank"),
    "clean_nodes4": (4, True, None), "hog_nodes4": (4, True, "node"), "delay_nodes4": (4, True, "node delays"),
}
MIN_RIGHT = 0.90
MAX_FALSE = 0.05
COLUMNS = ["stage", "case", "run", "mpi", "ranks", "nodes", "planted", "truth_percent", "interference_percent",
           "ci_low", "ci_high", "class", "named_ranks", "named_nodes", "first_rank", "first_node", "right",
           "named_any", "largest_rank_excess_pp", "largest_node_excess_pp", "named_above_percent",
           "imbalanced_ranks", "run_time_s", "load_1min", "kernel_queue_excess_pp"]


class Flavour:
    """One MPI build: its launcher, profiler, injector and demo."""

    def __init__(self, build, name):
        self.name = name
        self.build = os.path.abspath(build)
        self.profiler = os.path.join(self.build, "interpose", f"libtremor-{name}.so")
        self.injector = os.path.join(self.build, "injector", f"libtremor-inject-{name}.so")
        self.demo = os.path.join(self.build, "test", "integration", "bsp_demo")
        self.launcher = (["mpiexec.mpich"] if name == "mpich"
                         else ["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"])
        missing = [p for p in (self.profiler, self.injector, self.demo) if not os.path.exists(p)]
        if missing:
            raise SystemExit(f"{build}: missing {missing} (build tremor_preload tremor_inject bsp_demo)")


def excesses(charges, groups):
    """Largest excess over an equal share, % of the run: per group of ranks
    (a rank, a node), its charges less its part of all charges."""
    total, world = sum(charges), len(charges)
    return max((sum(charges[r] for r in ranks) - total * len(ranks) / world for ranks in groups), default=0.0)


def end_rank_processes(program):
    """Ends each live process of `program` and returns a line for each: pid,
    nice, scheduling group and CPU seconds, so that a hung run shows which
    rank starved and why. Hydra gives ranks sessions of their own, so
    ending the launcher does not end them."""
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if not handle.read().startswith(program.encode()):
                    continue
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/autogroup") as handle:
                group = handle.read().strip()
        except OSError:
            continue
        cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        lines.append(f"  pid {pid}: nice {fields[16]}, {group}, {cpu_s:.1f} CPU s")
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    return lines


def run_once(flavour, tremor, case, run, units, work, stage, seed):
    ranks, on_nodes, planted = CASES[case]
    out = os.path.join(work, f"{stage}-{case}-{run}")
    os.makedirs(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_") and not k.startswith("FAKE_")}
    env.update(TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none")
    preload = [flavour.profiler]
    target = run % (ranks if planted == "rank" else NODES)
    delayed_ranks = [target] if planted == "rank" else [r for r in range(ranks) if r % NODES == target]
    if planted in ("rank", "node delays"):
        env.update(DELAY, **injected_truth.TRACE_SETTINGS, TREMOR_INJECT_RANKS=",".join(map(str, delayed_ranks)),
                   TREMOR_INJECT_SEED=str(seed + run))
        preload = [flavour.injector, flavour.profiler]
    env["LD_PRELOAD"] = " ".join(preload)
    program = [flavour.demo, *ITERATIONS, "-c", units, "-O", out]
    if on_nodes:
        env.update(FAKE_NODES=str(NODES), FAKE_NODE_CPUS="/".join(str(n % 2) for n in range(NODES)))
        program = [os.path.join(REPOSITORY, "test", "integration", "fake_node.sh")] + program
    if planted == "node":
        env.update(FAKE_HOG_NODE=str(target), FAKE_NODE_HOGS=str(HOGS))
    try:
        result = subprocess.run(PRIORITY + flavour.launcher + ["-n", str(ranks)] + program, env=env,
                                capture_output=True, stdin=subprocess.DEVNULL, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{case} run {run}: no end after {RUN_TIMEOUT_S} s; its ranks:\n"
                           + "\n".join(end_rank_processes(flavour.demo))) from None
    if result.returncode != 0:
        raise RuntimeError(f"{case} run {run}: exit {result.returncode}: {result.stderr[-1500:]}")
    path = glob.glob(os.path.join(out, "*.h5"))[0]
    truth = float("nan")
    with h5py.File(path, "r") as h5:
        if planted in ("rank", "node delays"):
            delayed = sorted(set(injected_truth.delays(h5)["rank"].tolist()))
            if delayed != delayed_ranks:
                raise RuntimeError(f"{case} run {run}: the injector delayed ranks {delayed}, planted {delayed_ranks}")
            truth = injected_truth.injected_percent(h5)
        # The kernel's count (schedstat) of each rank's run-queue delay, its
        # excess over an equal share in pp of the run: beside a clean run that
        # names someone, whether the machine's own delay fell on that rank.
        run_time = float(h5.attrs["run_time_s"])
        queue_excess = injected_truth.excess_text([100.0 * float(q) / run_time
                                                   for q in h5["ranks/run_queue_delay_s"][()]])
    analysed = subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True, timeout=600)
    if analysed.returncode != 0:
        raise RuntimeError(f"tremor analyze {path}: {analysed.stderr[-800:]}")
    report = json.loads(analysed.stdout)
    diagnosis = report.get("diagnosis") or {}
    slow_ranks = [r["rank"] for r in diagnosis.get("slow_ranks") or []]
    slow_nodes = [n["hostname"] for n in diagnosis.get("slow_nodes") or []]
    charges = [c or 0.0 for c in (diagnosis.get("ranks") or {}).get("lost_percent") or [0.0] * ranks]
    node_groups = [[r for r in range(ranks) if r % NODES == n] for n in range(NODES)] if on_nodes else []
    if planted == "rank":
        right = bool(slow_ranks) and slow_ranks[0] == target
    elif planted in ("node", "node delays"):
        right = bool(slow_nodes) and slow_nodes[0] == f"node-{target}"
    else:
        right = not slow_ranks and not slow_nodes
    low, high = report["lost_percent_ci"]
    return {"stage": stage, "case": case, "run": run, "mpi": flavour.name, "ranks": ranks,
            "nodes": NODES if on_nodes else 1, "planted": "" if planted is None else f"{planted} {target}",
            "truth_percent": truth, "interference_percent": report["interference_percent"], "ci_low": low,
            "ci_high": high, "class": report["class"], "named_ranks": " ".join(map(str, slow_ranks)),
            "named_nodes": " ".join(slow_nodes), "first_rank": slow_ranks[0] if slow_ranks else "",
            "first_node": slow_nodes[0] if slow_nodes else "", "right": int(right),
            "named_any": int(bool(slow_ranks or slow_nodes)),
            "largest_rank_excess_pp": excesses(charges, [[r] for r in range(ranks)]),
            "largest_node_excess_pp": excesses(charges, node_groups) if on_nodes else "",
            "named_above_percent": diagnosis.get("named_above_percent"),
            "imbalanced_ranks": " ".join(str(r["rank"]) for r in diagnosis.get("imbalanced_ranks") or []),
            "run_time_s": report["run_time_s"], "load_1min": os.getloadavg()[0],
            "kernel_queue_excess_pp": queue_excess}


def summarize(rows):
    lines = ["| case | MPI | runs | planted right | clean runs naming someone | median truth % | "
             "median interference % | largest clean excess pp |", "|---|---|---|---|---|---|---|---|"]
    failures = []
    for case in dict.fromkeys(r["case"] for r in rows):
        mine = [r for r in rows if r["case"] == case]
        n, planted = len(mine), CASES[case][2]
        truths = [float(r["truth_percent"]) for r in mine if r["truth_percent"] == r["truth_percent"]]
        estimates = [float(r["interference_percent"]) for r in mine]
        right = sum(int(r["right"]) for r in mine)
        named = sum(int(r["named_any"]) for r in mine)
        excess = max(max(float(r["largest_rank_excess_pp"]),
                         float(r["largest_node_excess_pp"]) if r["largest_node_excess_pp"] != "" else 0.0)
                     for r in mine)
        truth_text = f"{statistics.median(truths):.2f}" if truths else "–"
        lines.append(f"| {case} | {mine[0]['mpi']} | {n} | {f'{right}/{n}' if planted else '–'} | "
                     f"{'–' if planted else f'{named}/{n}'} | {truth_text} | {statistics.median(estimates):.2f} | "
                     f"{'–' if planted else f'{excess:.2f}'} |")
        if planted and right < MIN_RIGHT * n:
            failures.append(f"{case}: the planted {planted} named first in {right} of {n} runs")
        if not planted and named > MAX_FALSE * n:
            failures.append(f"{case}: someone named in {named} of {n} clean runs")
    return "\n".join(lines) + "\n", failures


def write_csv(path, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in row.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="an MPICH build directory")
    parser.add_argument("--openmpi-build", help="an Open MPI build directory, for the 4-rank cases")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--stage", choices=["campaign", "calibrate"], default="campaign")
    parser.add_argument("--output", default="where-campaign")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--busy", type=int, default=0,
                        help="run this many busy loops beside the whole campaign, unbound, at the machine's "
                             "normal priority (a loaded machine; the job outranks them)")
    parser.add_argument("--keep", help="keep every run's files in this new folder (default: deleted)")
    args = parser.parse_args()
    if args.busy < 0 or args.runs < 1:
        parser.error("--busy takes 0 or more loops, --runs 1 or more")
    cases = args.cases.split(",")
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}; choose from {list(CASES)}")
    if any(CASES[c][1] for c in cases) and os.geteuid() != 0:
        skip_for("no-unshare", "the node cases need root: each rank gets its own UTS namespace (unshare --uts)")
    mpich = Flavour(args.build, "mpich")
    openmpi = Flavour(args.openmpi_build, "openmpi") if args.openmpi_build else mpich
    tremor = os.path.join(mpich.build, "estimators", "tremor")
    units = subprocess.run(PRIORITY + [mpich.demo, "-P"], capture_output=True, text=True, check=True).stdout.split()[-1]
    seed = 1000 if args.stage == "calibrate" else 11  # calibration and campaign never share runs
    os.makedirs(args.output, exist_ok=True)
    if args.keep:
        os.makedirs(args.keep)  # a new folder: a kept campaign is never mixed with another
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="tremor-where-")
    rows = []
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for run in range(args.runs):  # cases interleaved, so a drift of the machine's load hits them alike
            for case in cases:
                flavour = openmpi if CASES[case][0] > 2 else mpich
                row = run_once(flavour, tremor, case, run, units, work, args.stage, seed)
                rows.append(row)
                write_csv(os.path.join(args.output, "runs.csv"), rows)  # kept as it grows
                print(f"{case:13s} run {run}: planted {row['planted'] or '-':7s} truth {row['truth_percent']:6.2f} %  "
                      f"headline {row['interference_percent']:6.2f} %  ranks [{row['named_ranks']}] nodes "
                      f"[{row['named_nodes']}] excess {row['largest_rank_excess_pp']:.2f} pp  "
                      f"{'right' if row['right'] else 'WRONG'}", flush=True)
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    write_csv(os.path.join(args.output, "runs.csv"), rows)
    summary, failures = summarize(rows)
    with open(os.path.join(args.output, "summary.md"), "w") as handle:
        handle.write(summary)
    print(summary)
    for failure in failures:
        print("CHECK FAILED:", failure)
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
