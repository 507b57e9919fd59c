#!/usr/bin/python3
"""What Tremor's end of run costs as ranks grow, against the application's
own collectives (docs/overhead.md, "Finalize at many ranks").

For each process count: bsp_demo sleeping between global MPI_Allreduces
(-S, so ranks that outnumber the cores do not fight over them) is run
  1. alone with no work (-u 0): its loop time per iteration is the cost of
     one of the application's collectives at this scale;
  2. alone with the workload: the job's wall time and the loop's;
  3. with Tremor preloaded (TREMOR_LOG_LEVEL=debug): the job's wall time and
     rank 0's own timing of the end of run (waiting for every rank and the
     first exchange, the rest of the gather, the HDF5 file, the analysis and
     report, the number of collectives, rank 0's peak RSS).
The launcher is a parameter, so the same script runs where no MPI is
installed, with a carried Hydra:

  LD_LIBRARY_PATH=$B/lib scripts/bench-finalize-ranks.py \\
      --launcher "$B/bin/mpiexec.hydra -launcher fork" \\
      --preload $B/lib/libtremor-mpich.so --app $B/bin/bsp_demo --ranks 16,64,256

  scripts/bench-finalize-ranks.py --launcher mpiexec.mpich \\
      --preload build-mpich/interpose/libtremor-mpich.so --app build-mpich/test/integration/bsp_demo
  scripts/bench-finalize-ranks.py --launcher "mpirun.openmpi --oversubscribe --allow-run-as-root" \\
      --preload build-openmpi/interpose/libtremor-openmpi.so --app build-openmpi/test/integration/bsp_demo

LD_PRELOAD reaches the ranks only (env(1) between the launcher and the
program); the launcher's environment, LD_LIBRARY_PATH included, is passed on.
Prints one Markdown table; a run that fails or exceeds --timeout stops it.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

# Tremor's debug line; builds before the five-collective gather (2026-11-26)
# printed neither the meeting nor the number of collectives.
LINE = re.compile(r"finalize: (\d+) segments from (\d+) processes in ([\d.]+) s wall \((?:meeting ([\d.]+) s, )?"
                  r"gather ([\d.]+) s, HDF5 file ([\d.]+) s, analysis \+ report ([\d.]+) s\), (?:(\d+) collectives, )?"
                  r"([\d.]+) s CPU; peak RSS ([\d.]+) MB before, ([\d.]+) MB after")
LOOP = re.compile(r"bsp_demo: \d+ iterations on \d+ ranks, checksum [-\d]+, ([\d.]+) s")


def launch(opts, ranks, app_args, preload=None, env_extra=None, out=None):
    """(job wall s, loop s, stderr) of one run. A failed run is tried again up
    to --retries times: Open MPI 4.1.4 oversubscribed 256 ranks or more on a
    busy 2-core VM now and then reports a rank "exiting improperly" at the
    end, with or without Tremor."""
    env = dict(os.environ, **(env_extra or {}))
    program = ["env", f"LD_PRELOAD={preload}"] if preload else []
    command = shlex.split(opts.launcher) + ["-n", str(ranks)] + program + [opts.app] + app_args
    for attempt in range(opts.retries + 1):
        started = time.monotonic()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=opts.timeout, cwd=out)
        except subprocess.TimeoutExpired:
            sys.exit(f"bench-finalize-ranks: {' '.join(command)} did not finish within {opts.timeout} s")
        wall = time.monotonic() - started
        loop = LOOP.search(done.stdout)
        if done.returncode == 0 and loop:
            return wall, float(loop[1]), done.stderr
        print(f"bench-finalize-ranks: attempt {attempt + 1}: {' '.join(command)} failed (exit {done.returncode})",
              file=sys.stderr)
        if out:
            for name in os.listdir(out):
                os.remove(os.path.join(out, name))
    sys.exit(f"bench-finalize-ranks: {' '.join(command)} failed:\n{done.stderr[-2000:]}")


def measure(opts, ranks):
    workload = ["-S", "-u", str(opts.sleep_us), "-n", str(opts.iterations), "-b", "0", "-k", "0", "-t"]
    _, idle_loop, _ = launch(opts, ranks, ["-S", "-u", "0", "-n", str(opts.collectives), "-b", "0", "-k", "0", "-t"])
    plain_wall, plain_loop, _ = launch(opts, ranks, workload)
    with tempfile.TemporaryDirectory(prefix="tremor-bench-ranks-") as out:
        env = {"TREMOR_OUTPUT_DIR": out, "TREMOR_LOG_LEVEL": "debug", "TREMOR_REPORT": "none"}
        wall, loop, stderr = launch(opts, ranks, workload, preload=opts.preload, env_extra=env, out=out)
        line = LINE.search(stderr)
        if not line or not any(name.endswith(".h5") for name in os.listdir(out)):
            sys.exit(f"bench-finalize-ranks: no finalize line or run file at {ranks} ranks:\n{stderr[-2000:]}")
    finalize, meeting, gather, file, analysis = (float(line[i] or 0) for i in range(3, 8))
    collective = idle_loop / opts.collectives
    exchange = meeting + gather
    return dict(ranks=ranks, collective_ms=1e3 * collective, plain_wall=plain_wall, plain_loop=plain_loop, wall=wall,
                loop=loop, finalize=finalize, meeting=meeting, gather=gather, file=file, analysis=analysis,
                collectives=line[8] or "–", in_collectives=exchange / collective if collective > 0 else float("nan"),
                rss=float(line[11]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher", required=True, help="launcher command; '-n N' is appended")
    parser.add_argument("--preload", required=True, help="libtremor-<mpi>.so")
    parser.add_argument("--app", required=True, help="bsp_demo of the same MPI")
    parser.add_argument("--ranks", default="16,64,256")
    parser.add_argument("--iterations", type=int, default=20, help="iterations of the workload (default 20)")
    parser.add_argument("--sleep-us", type=int, default=5000, help="sleep per iteration, alternately 1x and 2x")
    parser.add_argument("--collectives", type=int, default=50, help="iterations of the run with no work")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--retries", type=int, default=1)
    opts = parser.parse_args()
    opts.app, opts.preload = os.path.abspath(opts.app), os.path.abspath(opts.preload)
    print(f"Launcher `{opts.launcher}`, {os.cpu_count()} CPUs, bsp_demo -S -u {opts.sleep_us} -n {opts.iterations}\n")
    print("| ranks | one app collective, ms | job without → with Tremor, s | loop without → with, s "
          "| finalize on rank 0, s | meeting s | gather s | HDF5 file s | analysis + report s | collectives "
          "| meeting + gather in app collectives | rank 0 peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for ranks in [int(r) for r in opts.ranks.split(",") if r]:
        r = measure(opts, ranks)
        print(f"| {r['ranks']} | {r['collective_ms']:.2f} | {r['plain_wall']:.1f} → {r['wall']:.1f} "
              f"| {r['plain_loop']:.2f} → {r['loop']:.2f} | {r['finalize']:.3f} | {r['meeting']:.3f} "
              f"| {r['gather']:.3f} | {r['file']:.3f} | {r['analysis']:.3f} | {r['collectives']} "
              f"| {r['in_collectives']:.1f} | {r['rss']:.0f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
