#!/usr/bin/env python3
"""`tremor watch` beside a running job (issue 51).

usage: watch_live.py --case CASE --launcher CMD --np N --preload LIB --injector LIB --tremor TREMOR
                     [--fake-node fake_node.sh] -- BSP_DEMO

CASE:
  window  the demo runs ~25 s (sleeping compute, spill every second) with the
          injector in front of the profiler making rank 1 five times as slow from
          10 s to 15 s after MPI_Init; `tremor watch DIR --json --interval 1
          --until-finished` runs beside it from before the launch. Checks:
          lines come before the run's end (the run file's start + run time);
          the lost % after the window is above the lost % before it (+5 pp);
          an open episode, opened by the window's start + 2 s, is reported
          before the window's end + 2 intervals; rank 1 is named the slowest
          rank (the diagnosis's slow rank, else the rank the run waited for
          most); the watch ends with the finished run file's headline and
          exit 0. The window's times are the injector's delay logs' (its
          first delayed call, its last return), not Tremor's. Fails a watch
          that only speaks at the end, one that reports no open episode or
          only once it closed, or one that names no rank.
  nodes   the same on 2 "nodes": each rank in a UTS namespace of its own
          (fake_node.sh, host node-0 or node-1) and a mount namespace where
          the output directory is its node's own, so the watch follows two
          directories (`tremor watch DIR/node-0 DIR/node-1`); besides the
          window's checks, rank 1 and node-1 are named. Fails a watch that
          reads one directory only (no figure: a rank's file is missing) or
          names the wrong node. Needs root (unshare); skipped for capability
          no-unshare otherwise.
  short   a run that starts and ends between two refreshes (--interval 600)
          of a watch started before it: the watch finds its run file and ends
          with it (exit 0) within 30 s. Fails a watch that waits for spill
          files forever (a Slurm job script's `wait` would hang).
  killed  the ranks are killed with SIGKILL mid-run: the watch (without
          --until-finished) says stalled or dead, names both ranks, exits 2,
          and its last figure equals `tremor analyze --recover`'s on the same
          spill files. Fails a watch that keeps waiting, one that exits 0, or
          one whose figure differs from the recovery's.
"""
import argparse
import csv
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import h5py

from launch import add_launch_arguments, launched_program, mpi_command, preloaded
from recorded_checks import check, failures  # noqa: E402  (test/common, on launch's path)
from tremor_testing import skip_for  # noqa: E402  (test/common)

WINDOW = (10.0, 15.0)  # asked of the injector; the checks take the window's times from its logs
INTERVAL = 1.0
# ~25 s: 550 iterations of 20 ms sleeping compute, a boundary every 1000 iterations of the inner loop
DEMO_ARGUMENTS = ["-n", "550", "-u", "20000", "-S", "-k", "0", "-b", "1000", "-q"]


class Watch:
    """`tremor watch` in the background; its JSON lines as they arrive."""

    def __init__(self, tremor, directories, *extra, interval=INTERVAL):
        directories = [directories] if isinstance(directories, str) else directories
        self.process = subprocess.Popen([tremor, "watch", *directories, "--json", "--interval", str(interval), *extra],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.thread = threading.Thread(target=self._read)
        self.thread.start()

    def _read(self):
        for line in self.process.stdout:
            if line.strip():
                self.lines.append(json.loads(line))

    def finish(self, timeout):
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            check(False, f"the watch did not exit within {timeout} s")
        self.thread.join()
        return self.process.returncode, self.process.stderr.read()


def launch(opts, env, arguments):
    command, env = preloaded(mpi_command(opts.launcher, opts.np, launched_program(opts) + arguments), env)
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def environment(opts, directory, libraries):
    return dict(os.environ, LD_PRELOAD=" ".join(libraries), TREMOR_OUTPUT_DIR=directory, TREMOR_SPILL_INTERVAL="1")


def injected_window(directories, rank):
    """The slow window's truth, from the injector's delay logs (not from
    Tremor): (first delayed call's entry, last delayed call's return) of
    `rank`, in Unix seconds. The log's times are CLOCK_MONOTONIC, as Python's
    time.monotonic() on Linux."""
    rows = []
    for directory in directories:
        for path in glob.glob(os.path.join(directory, f"tremor-inject_*_r{rank}_*.csv")):
            with open(path) as log:
                rows += [row for row in csv.DictReader(line for line in log if not line.startswith("#"))
                         if float(row["requested_us"]) > 0]
    if not check(rows, f"no delay log of rank {rank} in {directories}"):
        return None
    to_unix = time.time() - time.monotonic()
    return (min(float(row["entered_s"]) for row in rows) + to_unix,
            max(float(row["returned_s"]) for row in rows) + to_unix)


def follow_window(opts, env, run_command, watched, slow_rank, slow_node=None):
    """Runs the job under the injector's slow window on `slow_rank` beside
    `tremor watch WATCHED... --json --interval 1 --until-finished`, then
    checks its lines against the window the injector's logs give."""
    env.update(TREMOR_INJECT_RANKS=str(slow_rank), TREMOR_INJECT_CALLS="p2p,coll", TREMOR_INJECT_SLOWDOWN="4",
               TREMOR_INJECT_AFTER_S=str(WINDOW[0]), TREMOR_INJECT_FOR_S=str(WINDOW[1] - WINDOW[0]))
    watch = Watch(opts.tremor, watched, "--until-finished")
    command, env = preloaded(run_command, env)
    run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    _, run_err = run.communicate(timeout=180)
    check(run.returncode == 0, f"the demo failed: {run_err[-400:]}")
    code, err = watch.finish(timeout=120)
    check(code == 0, f"the watch exited {code}: {err[-400:]}")
    lines = watch.lines
    with open(os.path.join(watched[0], "watch.jsonl"), "w") as kept:  # for a failure's post-mortem
        kept.writelines(json.dumps(line) + "\n" for line in lines)
    live = [line for line in lines if line.get("state") == "running" and line.get("estimate_possible")]
    runs = [path for directory in watched for path in glob.glob(os.path.join(directory, "*.h5"))]
    window = injected_window(watched, slow_rank)
    if not check(len(runs) == 1 and lines and window, f"run files {runs}, {len(lines)} lines, window {window}"):
        return
    with h5py.File(runs[0], "r") as run_file:
        end = float(run_file.attrs["end_time_unix"])
    before_end = [line for line in live if line["time_unix"] < end]
    check(len(before_end) >= 10, f"only {len(before_end)} lines with figures before the run's end")
    check(lines[-1].get("state") == "finished" and lines[-1].get("headline_lines"),
          f"the last line is not the finished run's headline: {str(lines[-1])[:300]}")
    begin, finish = window
    before = [line["lost_percent"] for line in live if line["time_unix"] <= begin]
    after = [line["lost_percent"] for line in live if finish <= line["time_unix"] <= finish + 4 * INTERVAL]
    check(before and after and max(after) > before[-1] + 5.0,
          f"lost % did not rise over the window: before {before[-3:]}, after {after}")
    # An open episode reported before the window's end + 2 intervals (the
    # injector's times), one that had opened by the window's start + 2 s: a
    # watch that reports no open episode, or only once the episode closed,
    # fails. On a loaded machine the window can join an episode that opened
    # earlier (the machine's own delays): its start is then before the window's.
    deadline = finish + 2 * INTERVAL
    opened = [line for line in live if line.get("open_episode") and begin <= line["time_unix"] <= deadline
              and line["start_time_unix"] + line["open_episode"]["start_s"] <= begin + 2.0]
    check(opened, f"no open episode across the window's start reported by its end + 2 intervals "
                  f"({deadline - begin:.1f} s after its start)")
    after_window = [line for line in live if line["time_unix"] >= finish]
    named = [line.get("slow_rank") or line.get("slowest_rank") or {} for line in after_window]
    check(named and named[-1].get("rank") == slow_rank,
          f"rank {slow_rank} not named the slowest rank: {[n.get('rank') for n in named[-5:]]}")
    if slow_node is not None:
        nodes = [line.get("slow_node") or line.get("slowest_node") or {} for line in after_window]
        check(named and named[-1].get("hostname") == slow_node,
              f"the slow rank's node is {named[-1].get('hostname') if named else None}, not {slow_node}")
        check(nodes and nodes[-1].get("hostname") == slow_node,
              f"{slow_node} not named the slowest node: {[n.get('hostname') for n in nodes[-5:]]}")
    print(f"{len(lines)} lines, {len(before_end)} live before the end; window {finish - begin:.1f} s; lost % "
          f"before {before[-1:]}, after {max(after) if after else None}; open episode reported "
          f"{round(opened[0]['time_unix'] - begin, 1) if opened else None} s after the window's start")


def case_window(opts, directory):
    env = environment(opts, directory, [opts.injector, opts.preload])
    command = mpi_command(opts.launcher, opts.np, launched_program(opts) + DEMO_ARGUMENTS)
    follow_window(opts, env, command, [directory], slow_rank=1)


# Each rank in a UTS namespace of its own (fake_node.sh: host name node-N,
# rank r on node r mod 2) and a mount namespace where TREMOR_OUTPUT_DIR is
# that node's own directory (bind-mounted over it, as a node-local /tmp is on
# a cluster): the spill files of node-N's ranks are only in DIRECTORY/node-N.
NODE_DIRECTORY = """set -eu
node=$(( ${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}} % 2 ))
mount --bind "$NODE_BASE/node-$node" "$TREMOR_OUTPUT_DIR"
exec "$@"
"""


def case_nodes(opts, directory):
    reason = unshare_refused()
    if reason:
        skip_for("no-unshare", reason)
    shared = os.path.join(directory, "output")  # the path every rank is given; each node's own under it
    nodes = [os.path.join(directory, f"node-{n}") for n in range(2)]
    for path in [shared] + nodes:
        os.makedirs(path)
    wrapper = os.path.join(directory, "node_directory.sh")
    with open(wrapper, "w") as script:
        script.write(NODE_DIRECTORY)
    env = environment(opts, shared, [opts.injector, opts.preload])
    env.update(FAKE_NODES="2", NODE_BASE=directory)
    program = [opts.fake_node, "sh", wrapper] + launched_program(opts) + DEMO_ARGUMENTS
    follow_window(opts, env, mpi_command(opts.launcher, 2, program), nodes, slow_rank=1, slow_node="node-1")
    check(not os.listdir(shared), f"files in the shared path, not the nodes' own: {os.listdir(shared)}")


def unshare_refused():
    if os.geteuid() != 0:
        return "needs root: each rank gets its own UTS and mount namespace (unshare --uts --mount)"
    probe = subprocess.run(["unshare", "--uts", "--mount", "true"], capture_output=True, text=True)
    return f"unshare --uts --mount is refused here: {probe.stderr.strip()}" if probe.returncode != 0 else None


def case_killed(opts, directory):
    env = environment(opts, directory, [opts.preload])
    watch = Watch(opts.tremor, directory)
    run = launch(opts, env, ["-n", "5000", "-u", "20000", "-S", "-k", "0", "-b", "1000", "-q"])
    deadline = time.time() + 60
    while time.time() < deadline and not [line for line in watch.lines if line.get("estimate_possible")]:
        time.sleep(0.5)
    time.sleep(2)
    ranks = [line for line in watch.lines if line.get("ranks")]
    if not check(ranks, "the watch never read the ranks' files"):
        os.killpg(run.pid, signal.SIGKILL)
        return
    for rank in ranks[-1]["ranks"]:
        os.kill(rank["pid"], signal.SIGKILL)
    run.communicate(timeout=60)
    code, err = watch.finish(timeout=60)
    check(code == 2, f"the watch exited {code}, expected 2: {err[-300:]}")
    last = watch.lines[-1] if watch.lines else {}
    check(last.get("state") in ("stalled", "dead"), f"last state {last.get('state')}")
    check(sorted(last.get("stalled_ranks", [])) == list(range(opts.np)), f"stalled ranks {last.get('stalled_ranks')}")
    check("stalled" in err or "ended" in err, f"nothing said on stderr: {err[-300:]}")
    stem = os.path.basename(glob.glob(os.path.join(directory, "*.spill"))[0]).rsplit(".r", 1)[0]
    out = tempfile.mkdtemp(dir=directory)
    result = subprocess.run([opts.tremor, "analyze", "--recover", os.path.join(directory, stem), "--json",
                             "--output-dir", out], capture_output=True, text=True, timeout=120)
    if check(result.returncode == 0, f"analyze --recover failed: {result.stderr}"):
        recovered = json.loads(result.stdout)
        for key in ("segments", "lost_percent", "lost_percent_ci", "class"):
            check(last.get(key) == recovered.get(key), f"watch {key} {last.get(key)} != recover {recovered.get(key)}")
    print(f"killed: last state {last.get('state')}, {last.get('segments')} segments, lost {last.get('lost_percent')}")


def case_short(opts, directory):
    env = environment(opts, directory, [opts.preload])
    watch = Watch(opts.tremor, directory, interval=600)
    time.sleep(1.5)  # the watch has looked once and waits for spill files
    run = launch(opts, env, ["-n", "20", "-u", "300", "-k", "0", "-q"])
    run.communicate(timeout=60)
    started = time.time()
    code, err = watch.finish(timeout=30)
    check(code == 0, f"the watch exited {code}: {err[-300:]}")
    last = watch.lines[-1] if watch.lines else {}
    check(last.get("state") == "finished" and last.get("output_file", "").endswith(".h5"),
          f"the short run's run file was not reported: {str(last)[:300]}")
    print(f"short: finished {time.time() - started:.1f} s after the run, {last.get('segments')} segments")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("window", "nodes", "killed", "short"), required=True)
    parser.add_argument("--fake-node", help="fake_node.sh (case nodes)")
    parser.add_argument("--injector", required=True)
    parser.add_argument("--tremor", required=True)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    directory = tempfile.mkdtemp(prefix=f"tremor-watch-{opts.case}-")
    {"window": case_window, "nodes": case_nodes, "killed": case_killed, "short": case_short}[opts.case](opts, directory)
    if not failures:
        shutil.rmtree(directory, ignore_errors=True)
    print("FAILED" if failures else "PASSED", f"({len(failures)} failure(s)) in {directory}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
