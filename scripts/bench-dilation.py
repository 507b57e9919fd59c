#!/usr/bin/env python3
"""Run-time dilation by Tremor (issue 9): bsp_demo at about 10 Hz, 100 Hz,
1 kHz and 5 kHz of boundaries, each configuration (none, an empty PMPI
wrapper = the floor, Tremor) run in interleaved rounds; reports the median
loop time per configuration and the median per-round ratio to 'none'.

usage: bench-dilation.py BUILD_DIR [--pairs 9] [--np 2] [--sleep]
                          [--extra NAME=LIBRARY[,VAR=VALUE...] ...] [--rates 10,100,1000,5000]
--extra adds a preload library of your own (e.g. an experimental build, or
Tremor itself with other settings: tremor-cputime=LIB,TREMOR_COUNTERS=cputime)
to the interleaved rounds. With /usr/bin/time present, the job's involuntary
context switches (launcher and ranks) are reported too: under
oversubscription every system call is a chance to lose the core.
Compute is calibrated once (bsp_demo -P) and fixed for every run (-c), so
runs differ only by what the machine and the tool do. The time is
bsp_demo's own loop time (-t), so MPI_Init/MPI_Finalize (and
Tremor's end-of-run analysis, measured separately by bench_analysis) are not
in it. Standard library only.
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

RATES = {10: (10, 66667), 100: (100, 6667), 1000: (1000, 667), 5000: (5000, 133)}  # Hz: (iterations, base us)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--sleep", action="store_true", help="ranks sleep instead of computing (oversubscribed runs)")
    parser.add_argument("--rates", default=",".join(str(r) for r in RATES),
                        help="boundary rates to run, Hz (from " + ", ".join(str(r) for r in RATES) + ")")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=LIBRARY[,VAR=VALUE...]",
                        help="another preload library (with environment settings) to run in the same rounds")
    opts = parser.parse_args()
    library = glob.glob(os.path.join(opts.build, "interpose", "libtremor-*.so"))[0]
    flavour = re.search(r"libtremor-(\w+)\.so", library).group(1)
    launcher = (["mpirun.openmpi", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
                if flavour == "openmpi" else ["mpiexec.mpich"])
    demo = os.path.join(opts.build, "test", "integration", "bsp_demo")
    configurations = {"none": None, "empty": os.path.join(opts.build, "test", "bench", "libempty_pmpi_wrapper.so"),
                      "tremor": library}
    settings = {name: {} for name in configurations}
    for extra in opts.extra:
        name, _, rest = extra.partition("=")
        path, *assignments = rest.split(",")
        if not name or not os.path.exists(path) or any("=" not in a for a in assignments):
            sys.exit(f"--extra {extra}: expected NAME=an existing library[,VAR=VALUE...]")
        configurations[name] = path
        settings[name] = dict(a.split("=", 1) for a in assignments)
    timer = ["/usr/bin/time", "-f", "ctxsw %c %w cpu %U %S"] if os.access("/usr/bin/time", os.X_OK) else []
    out = tempfile.mkdtemp(prefix="tremor-dilation-")
    # Calibrate the compute loop once, so every run does the same work.
    calibration = []
    if not opts.sleep:
        result = subprocess.run(launcher + ["-n", "1", demo, "-P"], capture_output=True, text=True, timeout=120)
        calibration = ["-c", re.search(r"units_per_us (\d+)", result.stdout).group(1)]
    print(f"{flavour}, {opts.np} processes, {opts.pairs} interleaved rounds{', sleeping ranks' if opts.sleep else ''}")
    print(f"{'rate':>7} {'config':>14} {'median s':>9} {'ratio':>7} {'ratio min..max':>16}"
          + (f" {'invol. ctxsw':>13} {'vol. ctxsw':>11} {'job CPU s':>10}" if timer else ""))
    rates = [int(r) for r in opts.rates.split(",")]
    if any(r not in RATES for r in rates):
        sys.exit(f"--rates: choose from {', '.join(str(r) for r in RATES)}")
    for rate in rates:
        iterations, base_us = RATES[rate]
        times = {name: [] for name in configurations}
        switches = {name: [] for name in configurations}
        cpu = {name: [] for name in configurations}
        for _ in range(opts.pairs):
            for name, preload in configurations.items():
                env = dict(os.environ, TREMOR_OUTPUT_DIR=out, TREMOR_REPORT="none", TREMOR_LOG_LEVEL="off")
                if preload:
                    env["LD_PRELOAD"] = preload
                env.update(settings[name])
                command = launcher + ["-n", str(opts.np), demo, "-n", str(iterations), "-u", str(base_us), "-k", "0", "-t"] + calibration
                if opts.sleep:
                    command.append("-S")
                result = subprocess.run(timer + command, env=env, capture_output=True, text=True, timeout=600)
                counted = re.search(r"ctxsw (\d+) (\d+) cpu ([0-9.]+) ([0-9.]+)", result.stderr)
                if counted:
                    switches[name].append((int(counted.group(1)), int(counted.group(2))))
                    # The whole job's user + system CPU (launcher, start-up and exit
                    # included): under oversubscription steadier than the loop time.
                    cpu[name].append(float(counted.group(3)) + float(counted.group(4)))
                match = re.search(r", ([0-9.]+) s", result.stdout)
                if result.returncode != 0 or not match:
                    sys.exit(f"{name} at {rate} Hz failed: {result.stdout}{result.stderr[-500:]}")
                times[name].append(float(match.group(1)))
        for name in configurations:
            ratios = [t / b for t, b in zip(times[name], times["none"])]
            line = (f"{rate:>5}Hz {name:>14} {statistics.median(times[name]):9.4f} {statistics.median(ratios):7.4f} "
                    f"{min(ratios):7.3f}..{max(ratios):.3f}")
            if switches[name]:
                line += (f" {statistics.median(s[0] for s in switches[name]):13.0f}"
                         f" {statistics.median(s[1] for s in switches[name]):11.0f}"
                         f" {statistics.median(cpu[name]):10.2f}")
            print(line)
    subprocess.run(["rm", "-rf", out])


if __name__ == "__main__":
    main()
