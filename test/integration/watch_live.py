#!/usr/bin/env python3
"""`tremor watch` beside a running job (issue 51).

usage: watch_live.py --case CASE --launcher CMD --np N --preload LIB --injector LIB --tremor TREMOR -- BSP_DEMO

CASE:
  window  the demo runs ~25 s (sleeping compute, spill every second) with the
          injector in front of the profiler making rank 1 five times as slow from
          10 s to 15 s after MPI_Init; `tremor watch DIR --json --interval 1
          --until-finished` runs beside it from before the launch. Checks:
          lines come before the run's end (the run file's start + run time);
          the lost % after the window is above the lost % before it (+5 pp);
          an episode open at the last segment and across the window's
          start is reported during the window or by its end + 2 intervals; rank 1 is named the
          slowest rank (the diagnosis's slow rank, else the rank the run waited for most); the watch ends with the finished run file's headline
          and exit 0. Fails a watch that only speaks at the end, one that
          reports the episode only once closed, or one that names no rank.
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

WINDOW = (10.0, 15.0)
INTERVAL = 1.0


class Watch:
    """`tremor watch` in the background; its JSON lines as they arrive."""

    def __init__(self, tremor, directory, *extra, interval=INTERVAL):
        self.process = subprocess.Popen([tremor, "watch", directory, "--json", "--interval", str(interval), *extra],
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


def case_window(opts, directory):
    env = environment(opts, directory, [opts.injector, opts.preload])
    env.update(TREMOR_INJECT_RANKS="1", TREMOR_INJECT_CALLS="p2p,coll", TREMOR_INJECT_SLOWDOWN="4",
               TREMOR_INJECT_AFTER_S=str(WINDOW[0]), TREMOR_INJECT_FOR_S=str(WINDOW[1] - WINDOW[0]))
    watch = Watch(opts.tremor, directory, "--until-finished")
    run = launch(opts, env, ["-n", "550", "-u", "20000", "-S", "-k", "0", "-b", "1000", "-q"])
    _, run_err = run.communicate(timeout=180)
    check(run.returncode == 0, f"the demo failed: {run_err[-400:]}")
    code, err = watch.finish(timeout=120)
    check(code == 0, f"the watch exited {code}: {err[-400:]}")
    lines = watch.lines
    with open(os.path.join(directory, "watch.jsonl"), "w") as kept:  # for a failure's post-mortem
        kept.writelines(json.dumps(line) + "\n" for line in lines)
    live = [line for line in lines if line.get("state") == "running" and line.get("estimate_possible")]
    runs = glob.glob(os.path.join(directory, "*.h5"))
    if not check(len(runs) == 1 and lines, f"run files {runs}, {len(lines)} lines"):
        return
    with h5py.File(runs[0], "r") as run_file:
        start = float(run_file.attrs["start_time_unix"])
        end = float(run_file.attrs["end_time_unix"])
    before_end = [line for line in live if line["time_unix"] < end]
    check(len(before_end) >= 10, f"only {len(before_end)} lines with figures before the run's end")
    check(lines[-1].get("state") == "finished" and lines[-1].get("headline_lines"),
          f"the last line is not the finished run's headline: {str(lines[-1])[:300]}")
    elapsed = [(line["time_unix"] - start, line) for line in live]
    before = [line["lost_percent"] for t, line in elapsed if t <= WINDOW[0]]
    after = [line["lost_percent"] for t, line in elapsed if WINDOW[1] <= t <= WINDOW[1] + 4 * INTERVAL]
    check(before and after and max(after) > before[-1] + 5.0,
          f"lost % did not rise over the window: before {before[-3:]}, after {after}")
    # An episode open across the window's start, reported while the window is on
    # or within 2 intervals of its end. On a loaded machine the window can join
    # an episode that opened earlier (the machine's own delays): its start is
    # then before the window's, which the check allows.
    opened = [(t, line["open_episode"]) for t, line in elapsed if line.get("open_episode")
              and WINDOW[0] <= t <= WINDOW[1] + 2 * INTERVAL and line["open_episode"]["start_s"] <= WINDOW[0] + 2]
    check(opened, f"no episode open across the window's start reported by {WINDOW[1] + 2 * INTERVAL} s")
    named = [(line.get("slow_rank") or line.get("slowest_rank") or {}).get("rank") for t, line in elapsed
             if t >= WINDOW[1]]
    check(named and named[-1] == 1, f"rank 1 not named the slowest rank: {named[-5:]}")
    print(f"window: {len(lines)} lines, {len(before_end)} live before the end; lost % before {before[-1:]}, "
          f"after {max(after) if after else None}; episode reported at "
          f"{round(opened[0][0], 1) if opened else None} s")


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
    parser.add_argument("--case", choices=("window", "killed", "short"), required=True)
    parser.add_argument("--injector", required=True)
    parser.add_argument("--tremor", required=True)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    directory = tempfile.mkdtemp(prefix=f"tremor-watch-{opts.case}-")
    {"window": case_window, "killed": case_killed, "short": case_short}[opts.case](opts, directory)
    if not failures:
        shutil.rmtree(directory, ignore_errors=True)
    print("FAILED" if failures else "PASSED", f"({len(failures)} failure(s)) in {directory}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
