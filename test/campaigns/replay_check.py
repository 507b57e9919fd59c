#!/usr/bin/python3
"""Accuracy on recorded replays: real runs of every kind of interference
(test/data/replays/, validation/campaigns/record_replays.sh), analysed again
with this build's `tremor analyze`.

Each replay holds a run file and the injector's logs of that run. The truth
comes from the logs alone (validation/campaigns/injected_truth.py): the
injected critical path plus the bounds [low, high] of the kernel's run-queue
delay on it, the band [truth + low, truth + high]. A replay cannot be busy:
what the machine took is measured and inside the band. Checks:

  estimate   within the band widened by the tolerance of replay_tolerance.py
             (derived from the held-out campaigns), every replay but those
             listed in known_misses.csv beside the replays, each with its
             diagnosis; a listed replay that comes back within its band
             fails too (the list must shrink as the estimator is fixed);
  interval   the 95 % interval meets the widened band in at least 90 % of
             the replays, and has a positive width in at least 90 % of
             them (a point claims certainty no finite run gives); how
             often it meets the band itself is printed beside;
  clean      a replay with nothing planted (clean, checkpoint, io_clean,
             clean_long) is never HIGH, reads at most the band's high end
             plus the tolerance, and names no rank (slow or loaded) with a
             larger charge;
  component  an io_only replay books to file I/O at least half of its
             planted truth (the delays sit in write calls).

Known-wrong estimators this fails (docs/reliability.md, mutants): one that
always answers 0, the paper's plain 4·MAD, one that counts measured delays
twice, and an interval held at its point.

usage: replay_check.py --tremor B/estimators/tremor [--data test/data/replays] [--only WORKLOAD] [--jobs N]
Prints one table (replay, truth band, estimate, interval, verdict); exit 1 on any failed check.
"""
import argparse
import concurrent.futures
import csv
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
import injected_truth  # noqa: E402
import replay_tolerance  # noqa: E402

import h5py  # noqa: E402

CLEAN_KINDS = {"clean", "checkpoint", "io_clean", "clean_long"}
MIN_INTERVAL_COVERAGE = 0.90
MIN_POSITIVE_WIDTH = 0.90
MIN_IO_SHARE = 0.5


def unpack(folder, work):
    """Copies the replay's files into work, uncompressed; returns the run file's path."""
    os.makedirs(work)
    run_files = []
    for packed in sorted(glob.glob(os.path.join(folder, "*.gz"))):
        target = os.path.join(work, os.path.basename(packed)[:-3])
        with gzip.open(packed, "rb") as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink)
        if target.endswith(".h5"):
            run_files.append(target)
    if len(run_files) != 1:
        raise RuntimeError(f"{folder}: expected one run file, found {len(run_files)}")
    return run_files[0]


def truth_band(path):
    """(truth %, band low %, band high %) of a run file from the injector's logs beside it."""
    with h5py.File(path, "r") as h5:
        run_time_s = float(h5.attrs["run_time_s"])
        critical_s, _ = injected_truth.critical_path(h5)
        machine = injected_truth.machine_path(h5)
    if machine is None:
        raise RuntimeError(f"{path}: the injector's logs carry no run-queue delays")
    truth = 100.0 * critical_s / run_time_s
    return truth, truth + 100.0 * machine[0] / run_time_s, truth + 100.0 * machine[1] / run_time_s


def analyse(tremor, path):
    result = subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"tremor analyze {path}: exit {result.returncode}: {result.stderr.strip()[-500:]}")
    return json.loads(result.stdout)


def io_percent(report):
    """The lost time the diagnosis books to file I/O, % of the run."""
    lost = ((report.get("diagnosis") or {}).get("components") or {}).get("lost") or {}
    return float(lost.get("io", 0.0))


def judge(kind, truth, low, high, report, r):
    """(interval meets the widened band, meets the band itself, [failed checks]) of one replay. The
    estimate is the report's headline (interference_percent); the interval is the primary estimate's,
    and the primary estimate must be the headline (the method a run uses by default)."""
    estimate = float(report["interference_percent"])
    ci_low, ci_high = (float(v) for v in report["lost_percent_ci"])
    tolerance = replay_tolerance.tolerance_pp(high, r)
    failures = []
    if report.get("method") != "primary" or abs(float(report["lost_percent"]) - estimate) > 1e-9:
        failures.append(f"the headline ({report.get('method')}, {estimate:.2f} %) is not the primary estimate "
                        f"({float(report['lost_percent']):.2f} %)")
    if replay_tolerance.miss(estimate, low, high) > tolerance:
        failures.append(f"estimate {estimate:.2f} % outside [{low:.2f}, {high:.2f}] % +- {tolerance:.2f} pp")
    if kind in CLEAN_KINDS:
        if report["class"] == "high":
            failures.append("nothing planted, yet HIGH")
        if estimate > high + tolerance:
            failures.append(f"nothing planted, yet {estimate:.2f} % > {high + tolerance:.2f} %")
        named = ((report.get("diagnosis") or {}).get("slow_ranks")) or []
        beyond = [(r["rank"], r.get("kind"), round(float(r["lost_percent"]), 2)) for r in named
                  if float(r["lost_percent"]) > high + tolerance]
        if beyond:
            failures.append(f"nothing planted, yet ranks named beyond {high + tolerance:.2f} %: {beyond}")
    if kind == "io_only" and io_percent(report) < MIN_IO_SHARE * truth:
        failures.append(f"{io_percent(report):.2f} % booked to file I/O for {truth:.2f} % planted there")
    meets = ci_low <= high + tolerance and ci_high >= low - tolerance
    return meets, ci_low <= high and ci_high >= low, failures


def known_misses(data):
    """{replay: diagnosis} of known_misses.csv (replay,diagnosis), {} without one."""
    path = os.path.join(data, "known_misses.csv")
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as handle:
        return {row["replay"]: row["diagnosis"] for row in csv.DictReader(handle)}


def examine(tremor, data, folder, work, r):
    """One replay's table row and its failed checks."""
    kind = os.path.basename(folder).rsplit("-", 1)[0]
    path = unpack(folder, work)
    truth, low, high = truth_band(path)
    report = analyse(tremor, path)
    meets, meets_band, failed = judge(kind, truth, low, high, report, r)
    ci_low, ci_high = (float(v) for v in report["lost_percent_ci"])
    return {"name": os.path.relpath(folder, data), "truth": truth, "low": low, "high": high,
            "estimate": float(report["interference_percent"]), "ci": (ci_low, ci_high), "class": report["class"],
            "meets": meets, "meets_band": meets_band, "positive_width": ci_high > ci_low, "failed": failed}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--data", default=os.path.join(HERE, "..", "data", "replays"))
    parser.add_argument("--only", help="one workload's replays")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--table", help="also write what is printed to this file (scripts/test-all.sh shows it)")
    args = parser.parse_args()
    lines = []

    def say(text):
        print(text)
        lines.append(text)
    r, worst = replay_tolerance.relative_spread()
    folders = sorted(f for f in glob.glob(os.path.join(args.data, args.only or "*", "*-[0-9]*")) if os.path.isdir(f))
    if not folders:
        say(f"CHECK FAILED: no replays under {args.data}")
        return 1
    known = known_misses(args.data)
    say(f"tolerance: {replay_tolerance.MARGIN:g} x {r:.4f} x (truth + high), from the held-out campaigns "
          f"(largest relative miss: {worst[0]} {worst[1]})")
    with tempfile.TemporaryDirectory(prefix="tremor-replays-") as work:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            rows = list(pool.map(lambda item: examine(args.tremor, args.data, item[1], os.path.join(work, str(item[0])), r),
                                 enumerate(folders)))
    say(f"{'replay':34s} {'truth %':>8s} {'band %':>17s} {'estimate %':>10s} {'interval %':>17s} {'class':6s} verdict")
    failures = []
    for row in rows:
        name, failed = row["name"], row["failed"]
        if name in known:
            verdict = f"known miss ({known[name]})" if failed else "FAIL: a known miss is within its band now"
            failed = [] if failed else ["listed in known_misses.csv but within its band: remove it from the list"]
        else:
            verdict = "ok" if not failed else "FAIL: " + "; ".join(failed)
        if not row["meets_band"]:
            verdict += "; interval misses the band"
        say(f"{name:34s} {row['truth']:8.2f} [{row['low']:6.2f}, {row['high']:6.2f}] {row['estimate']:10.2f} "
              f"[{row['ci'][0]:6.2f}, {row['ci'][1]:6.2f}] {row['class']:6s} {verdict}")
        failures += [f"{name}: {text}" for text in failed]
    listed = [name for name in known if not any(row["name"] == name for row in rows)]
    if listed and not args.only:
        failures.append(f"known_misses.csv lists replays that do not exist: {listed}")
    n = len(rows)
    meets, meets_band, positive = (sum(row[key] for row in rows) for key in ("meets", "meets_band", "positive_width"))
    say(f"interval meets the widened band in {meets} of {n} replays ({meets / n:.0%}; at least "
          f"{MIN_INTERVAL_COVERAGE:.0%} required), the band itself in {meets_band} ({meets_band / n:.0%}); "
          f"positive width in {positive} ({positive / n:.0%}; at least {MIN_POSITIVE_WIDTH:.0%} required)")
    if meets < MIN_INTERVAL_COVERAGE * n:
        failures.append(f"the interval meets the widened band in {meets / n:.0%} of the replays")
    if positive < MIN_POSITIVE_WIDTH * n:
        failures.append(f"the interval has a positive width in only {positive / n:.0%} of the replays")
    for failure in failures:
        say(f"CHECK FAILED: {failure}")
    say(f"replays: {n - len({f.split(':')[0] for f in failures if ':' in f})} of {n} passed")
    if args.table:
        with open(args.table, "w") as sink:
            sink.write("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
