#!/usr/bin/python3
"""Cost of Tremor's finalize phase on the root (rank 0): wall time of the
gather, the HDF5 file and the analysis + report, the root's CPU time for all
of it and its peak RSS before and after, as Tremor logs them at
TREMOR_LOG_LEVEL=debug; and the file's size per segment and process.

Two series, each a Markdown table:
  segments   bsp_demo with no compute on 1 MPICH process, 10^3 ... 10^7
             iterations: real segments through the whole real path
  processes  bsp_demo sleeping 200 us per iteration (so oversubscribed ranks
             do not fight for the cores), a fixed number of iterations, on
             2 ... 32 Open MPI processes (--oversubscribe)

usage: scripts/bench-finalize.py [--mpich-build DIR] [--openmpi-build DIR]
           [--segments 1e3,1e4,...] [--processes 2,4,...] [--iterations N]
Wall time is noisy on a shared machine; the CPU column is the steadier one.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"finalize: (\d+) segments from (\d+) processes in ([\d.]+) s wall \(meeting ([\d.]+) s, "
                  r"gather ([\d.]+) s, HDF5 file ([\d.]+) s, analysis \+ report ([\d.]+) s\), \d+ collectives, "
                  r"([\d.]+) s CPU; peak RSS ([\d.]+) MB before, ([\d.]+) MB after")


def run(launch, build, flavour, app_args, timeout):
    with tempfile.TemporaryDirectory(prefix="tremor-bench-finalize-") as out:
        env = dict(os.environ, TREMOR_OUTPUT_DIR=out, TREMOR_LOG_LEVEL="debug",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        preload = os.path.join(build, "interpose", f"libtremor-{flavour}.so")
        app = os.path.join(build, "test", "integration", "bsp_demo")
        command = launch + ["env", f"LD_PRELOAD={preload}", app] + app_args
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        elapsed = time.monotonic() - started
        match = LINE.search(done.stderr)
        if done.returncode != 0 or not match:
            sys.exit(f"bench-finalize: {' '.join(command)} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        segments, processes = int(match[1]), int(match[2])
        wall, meeting, gather, file, analysis, cpu, rss_before, rss_after = (float(match[i]) for i in range(3, 11))
        gather += meeting
        h5 = [os.path.join(out, name) for name in os.listdir(out) if name.endswith(".h5")]
        file_bytes = os.path.getsize(h5[0]) if h5 else 0
        return dict(segments=segments, processes=processes, wall=wall, gather=gather, file=file, analysis=analysis,
                    cpu=cpu, rss_before=rss_before, rss_after=rss_after, run=elapsed,
                    bytes_per=file_bytes / (segments * processes))


def table(title, rows):
    print(f"\n{title}\n")
    print("| segments | processes | finalize wall s | gather s | HDF5 file s | analysis + report s | root CPU s "
          "| root peak RSS MB before → after | file B per segment and process | whole run s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['segments']:,} | {r['processes']} | {r['wall']:.3f} | {r['gather']:.3f} | {r['file']:.3f} "
              f"| {r['analysis']:.3f} | {r['cpu']:.3f} | {r['rss_before']:.0f} → {r['rss_after']:.0f} "
              f"| {r['bytes_per']:.1f} | {r['run']:.1f} |")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mpich-build", default=os.path.join(TOP, "build-mpich"))
    parser.add_argument("--openmpi-build", default=os.path.join(TOP, "build-openmpi"))
    parser.add_argument("--segments", default="1e3,1e4,1e5,1e6,1e7")
    parser.add_argument("--processes", default="2,4,8,16,32")
    parser.add_argument("--iterations", type=int, default=2000, help="segments per run of the processes series")
    args = parser.parse_args()

    # -c 1 skips bsp_demo's calibration; -u 0 -b 0 -k 0: no compute, empty
    # ring messages, no checkpoints, so the run is mostly boundaries.
    rows = []
    for count in [int(float(s)) for s in args.segments.split(",") if s]:
        rows.append(run(["mpiexec.mpich", "-n", "1"], args.mpich_build, "mpich",
                        ["-n", str(count), "-u", "0", "-b", "0", "-k", "0", "-c", "1", "-q"], timeout=3600))
    if rows:
        table("Segments (MPICH, 1 process, bsp_demo -u 0):", rows)

    rows = []
    for processes in [int(p) for p in args.processes.split(",") if p]:
        rows.append(run(["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root", "-np", str(processes)],
                        args.openmpi_build, "openmpi",
                        ["-n", str(args.iterations), "-S", "-u", "200", "-b", "1024", "-k", "0", "-q"], timeout=3600))
    if rows:
        table(f"Processes (Open MPI, oversubscribed on {os.cpu_count()} cores, bsp_demo -S -u 200, "
              f"{args.iterations} iterations):", rows)


if __name__ == "__main__":
    main()
