#!/usr/bin/python3
"""check_campaign.py's checks on campaign outputs of known content (no MPI):
the scale check passes a headline median within its band of the actual run,
fails one outside it (a known-wrong prediction: twice the base run's time),
widens the band by the machine's measured share of both runs, and fails a run
whose share was not measured; the interference check fails a run without
injection read above the low class plus the machine's share, and a row
without a measured share."""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_campaign.py")
failures = []


def write_csv(path, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def machine_file(folder, run_queue_s):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "machine_load.txt"), "w") as handle:
        json.dump({"run_queue_s": run_queue_s, "steal_s": 0.0, "wall_s": 1.0, "processes": 2}, handle)


def verdict(script):
    """Exit status of check_campaign's functions run on the prepared folder."""
    code = f"import sys; sys.argv = ['x']; sys.path.insert(0, {HERE!r}); import check_campaign as c\n" + script
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def expect(what, result, status):
    good = result.returncode == status
    print(f"{'ok  ' if good else 'FAIL'} {what}: exit {result.returncode}, expected {status}")
    if not good:
        failures.append(what)
        print(result.stdout[-2000:] + result.stderr[-2000:])


def scale_case(folder, median_s, actual_s, base_queue_s=0.0, actual_queue_s=0.0, measured=True):
    base_dir, actual_dir = os.path.join(folder, "np2"), os.path.join(folder, "np4")
    os.makedirs(base_dir, exist_ok=True)
    os.makedirs(actual_dir, exist_ok=True)
    for path in (os.path.join(base_dir, "machine_load.txt"), os.path.join(actual_dir, "machine_load.txt")):
        if os.path.exists(path):
            os.remove(path)
    if measured:
        machine_file(base_dir, base_queue_s)
        machine_file(actual_dir, actual_queue_s)
    runs = [{"workload": "ftq", "repetition": 0, "processes": 2, "role": "base", "run_time_s": 1.0,
             "h5_file": os.path.join(base_dir, "run.h5")},
            {"workload": "ftq", "repetition": 0, "processes": 4, "role": "target", "run_time_s": actual_s,
             "h5_file": os.path.join(actual_dir, "run.h5")}]
    comparisons = [{"workload": "ftq", "repetition": 0, "method": "headline", "factor": 2, "processes": 4,
                    "median_s": median_s, "actual_repetition": 0, "actual_run_time_s": actual_s,
                    "relative_error": (median_s - actual_s) / actual_s}]
    write_csv(os.path.join(folder, "runs.csv"), runs)
    write_csv(os.path.join(folder, "comparisons.csv"), comparisons)
    return verdict(f"rows = list(c.read_csv({os.path.join(folder, 'runs.csv')!r}))\n"
                   f"comparisons = list(c.read_csv({os.path.join(folder, 'comparisons.csv')!r}))\n"
                   "c.check_scale_error(rows, comparisons, 2)\n")


def interference_case(folder, estimated, machine, delays=0):
    rows = [{"run": 0, "level_percent": 0, "injected_delays": delays, "estimated_percent": estimated,
             "estimate_class": "low" if estimated < 7.5 else "medium", "machine_percent": machine}]
    write_csv(os.path.join(folder, "runs.csv"), rows)
    return verdict(f"for r in c.read_csv({os.path.join(folder, 'runs.csv')!r}):\n"
                   "    c.check_uninjected_run(r)\n")


def main():
    with tempfile.TemporaryDirectory() as folder:
        expect("scale: a median 1 % off the actual run", scale_case(folder, 1.03, 1.04), 0)
        expect("scale: twice the base run's time as the prediction", scale_case(folder, 2.0, 1.04), 1)
        expect("scale: a median 30 % off, the machine took 10 % of each run",
               scale_case(folder, 1.04 * 0.7, 1.04, base_queue_s=0.1, actual_queue_s=0.104), 1)
        expect("scale: a median 30 % off, the machine took 20 % of each run",
               scale_case(folder, 1.04 * 0.7, 1.04, base_queue_s=0.2, actual_queue_s=0.208), 0)
        expect("scale: a run whose machine share was not measured", scale_case(folder, 1.03, 1.04, measured=False),
               1)
        expect("interference: no injection, 3 % on a quiet machine", interference_case(folder, 3.0, 0.2), 0)
        expect("interference: no injection, 9 % on a quiet machine", interference_case(folder, 9.0, 0.2), 1)
        expect("interference: no injection, 9 % when the machine took 4 %", interference_case(folder, 9.0, 4.0), 0)
        expect("interference: a run without a measured share", interference_case(folder, 3.0, ""), 1)
        expect("interference: a run without injection that logged delays", interference_case(folder, 3.0, 0.2, 4),
               1)
    print("check_campaign checks " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
