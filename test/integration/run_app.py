#!/usr/bin/env python3
"""Runs an MPI program with Tremor preloaded and checks the run file.

usage: run_app.py --launcher CMD... --np N --preload LIB [--env K=V] --check KIND [--arg K=V]
                  -- PROGRAM ARGS...
The launcher words are given as one --launcher string (split on spaces).
Each check opens the single .h5 file the run produced (h5py) and asserts
what the program is known to have done. Exit 0 on success.
"""
import argparse
import glob
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

from launch import add_launch_arguments, launched_program, mpi_command, run_preloaded_measured  # same folder

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
import injected_truth  # noqa: E402
import own_sleep  # noqa: E402  (same folder)
from accuracy_checks import (WORK_RATIO_TOLERANCE, WORK_SHARE_TOLERANCE, check_oversubscribed_clean,  # noqa: E402
                             check_planted, check_quiet, fail, record, report_of)
from tremor_testing import CheckFailed, MachineLoadError, perf_switch_records_refusal, print_calibration  # noqa: E402
METRICS_DEF = os.path.join(HERE, "..", "..", "segments", "include", "tremor", "metrics.def")


def metric_names():
    text = open(METRICS_DEF).read()
    quantized = re.findall(r"^TREMOR_QUANTIZED\((\w+),", text, re.M)
    features = re.findall(r"^TREMOR_FEATURE\((\w+),", text, re.M)
    return quantized, features


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def counter_source(f):
    """The work counter's kind: an HDF5 enum since schema 4, its name before."""
    value = f.attrs["counter_source"]
    members = h5py.check_enum_dtype(f.attrs.get_id("counter_source").dtype)
    if members is None:
        return text(value)
    return {number: name for name, number in members.items()}[int(value)]


def per_rank_features(f):
    """features[r][s] -> dict name -> count, for every detail rank."""
    names = [text(n) for n in f["detail/signature_features"][:]]
    signatures = f["detail/signatures"][:]
    index = f["detail/signature_index"][:]
    offset = f["detail/signature_offset"][:]
    out = []
    for r in range(index.shape[0]):
        out.append([dict(zip(names, (int(x) for x in signatures[offset[r] + index[r, s]])))
                    for s in range(index.shape[1])])
    return out


def detail_values(f, metric):
    return f[f"bins/{metric}/value"][:][f[f"detail/{metric}"][:]]



def check_bsp(f, args):
    n = int(args["iterations"])
    sent = int(args["bytes"])
    segments = f["segments/duration_s"].shape[0]
    if segments != n + 1:
        fail(f"expected {n} boundaries + the final segment = {n + 1} segments, found {segments}")
    world = int(f.attrs["world_size"])
    for r, rows in enumerate(per_rank_features(f)):
        for s, feats in enumerate(rows[:n]):
            expected = (sent if world > 1 else 0) + 8  # ring exchange + the 8-byte Allreduce
            if feats["bytes_sent"] != expected:
                fail(f"rank row {r} segment {s}: bytes_sent {feats['bytes_sent']} != {expected}")
            if feats["coll_all_to_all"] != 1:
                fail(f"rank row {r} segment {s}: {feats['coll_all_to_all']} all-to-all collectives")
        if rows[n]["bytes_sent"] != 0:
            fail("the final segment should have sent nothing")
    closing = [text(f["call_names"][c]) for c in f["segments/closing_call"][:]]
    if closing[:n] != ["MPI_Allreduce"] * n or closing[n] != "MPI_Finalize":
        fail(f"closing calls wrong: {closing}")
    # Each rank's segments tile its run, one after the other: their durations
    # add up to at most the longest rank's run time (within the log codes'
    # 1/2048 each). A boundary counted in the segment after it too exceeds it.
    run_time = float(f.attrs["run_time_s"])
    for r, total in enumerate(detail_values(f, "duration").sum(axis=1)):
        if total > run_time * (1 + 2 / 2048):
            fail(f"rank row {r}: its segments add up to {total:.6f} s, more than the run's {run_time:.6f} s")


def check_segments(f, args):
    segments = f["segments/duration_s"].shape[0]
    if segments != int(args["count"]):
        fail(f"expected {args['count']} segments, found {segments}")


IO_EXPECTED = [
    {"io_opens": 1, "io_closes": 1, "io_writes": 2, "io_bytes_written": 1500, "io_reads": 0, "io_bytes_read": 0},
    {"io_opens": 1, "io_closes": 1, "io_reads": 3, "io_bytes_read": 1200, "io_writes": 0, "io_bytes_written": 0},
    {"io_opens": 2, "io_closes": 2, "io_writes": 1, "io_bytes_written": 1024, "io_reads": 1, "io_bytes_read": 300},
    {"io_opens": 1, "io_closes": 1, "io_writes": 1, "io_bytes_written": 2048, "io_reads": 1, "io_bytes_read": 1024},
    {"io_opens": 0, "io_closes": 0, "io_writes": 0, "io_bytes_written": 0, "io_reads": 0, "io_bytes_read": 0},
]


def check_io(f, args):
    rows = per_rank_features(f)
    for r, segments in enumerate(rows):
        if len(segments) != len(IO_EXPECTED):
            fail(f"expected {len(IO_EXPECTED)} segments, found {len(segments)}")
        for s, expected in enumerate(IO_EXPECTED):
            got = {k: segments[s][k] for k in expected}
            if got != expected:
                fail(f"rank row {r} segment {s}: {got} != {expected}")
    io_time = detail_values(f, "io_time")
    if not (io_time[:, :4] > 0).all():
        fail("I/O segments should have time inside I/O")


def check_sde(f, args):
    n = int(args["iterations"])
    if counter_source(f) != "papi":
        fail(f"counter source is {counter_source(f)}, not papi")
    work = f["segments/work"][:]
    expected = [1000.0 * (i % 3 + 1) for i in range(n)] + [0.0]
    # The log code keeps counts below 2048 exactly, larger ones within 1/2048.
    def close(a, b):
        return a == b if b < 2048 else abs(a - b) <= b / 2048

    if len(work) != n + 1 or not all(close(a, b) for a, b in zip(work, expected)):
        fail(f"per-segment work {list(work)} != {expected}")
    per_rank = detail_values(f, "work")
    if not all(close(a, b) for row in per_rank for a, b in zip(row, expected)):
        fail("per-rank work deltas are not within the log code's precision")


def check_switch_records(f, args, requested):
    """thread_cputime fills in between clock reads from context-switch records
    unless asked not to (cputime_syscall), the node has more ranks than CPUs,
    or perf refuses them, which the test's own probe tells
    (tremor_testing.perf_switch_records_refusal); the start-up line says why
    they are off."""
    events = [text(e) for e in f["counter_events"][()]]
    used = "PERF_RECORD_SWITCH" in events
    oversubscribed = args["np"] > (os.cpu_count() or 1)
    refusal = args["perf_refusal"]
    expected = requested != "cputime_syscall" and not oversubscribed and refusal is None
    print(f"counter events {events}; the test's probe: {refusal or 'perf allows context-switch records'}")
    if used != expected:
        fail(f"context-switch records {'in use' if used else 'not used'} with {requested}, {args['np']} ranks on "
             f"{os.cpu_count()} CPUs and the probe's answer {refusal or 'allowed'}")
    if oversubscribed and requested != "cputime_syscall" and "more ranks than CPUs" not in args["stderr"]:
        fail("the start-up line does not say why the records are off")
    if not oversubscribed and refusal and requested != "cputime_syscall" and \
            "context-switch records unavailable (perf_event_open" not in args["stderr"]:
        fail("thread_cputime reads the clock every time without saying why")




def check_work(f, args):
    """bsp_demo -u US: the CPU-time work of a segment is its compute, whether
    the boundary read the counter or took the time since a recent reading as
    busy (segments under 20 us). The compute is calibrated in wall time, which
    this VM's two vCPUs make unreliable, so work is compared with the
    segment's own time outside MPI (CPU time <= wall time; equal when the
    rank kept its core) and across the program's 1x and 2x iterations."""
    requested = args.get("source", "cputime")
    wanted = {"cputime": "thread_cputime", "cputime_syscall": "thread_cputime", "oncpu": "thread_oncpu"}[requested]
    if wanted == "thread_oncpu" and args["perf_refusal"]:
        # The test's own probe: perf refuses the records here, so Tremor must fall back to the CPU clock.
        print(f"{args['perf_refusal']}: checking the thread_cputime fallback")
        wanted = "thread_cputime"
    source = counter_source(f)
    if source != wanted:
        fail(f"counter source is {source}, not {wanted}")
    if requested.startswith("cputime"):
        check_switch_records(f, args, requested)
    # The first and last segments hold start-up and exit; column j is iteration j - 1.
    work = detail_values(f, "work")[:, 1:-1]
    outside = (detail_values(f, "duration") - detail_values(f, "mpi_time"))[:, 1:-1] * 1e9
    share = np.median(work / np.maximum(outside, 1.0))
    small, large = np.median(work[:, 1::2]), np.median(work[:, 0::2])
    # Each rank's figures: bounded by what the machine took from the rank it took most from.
    added = args["load"].largest_process_seconds() / float(f.attrs["run_time_s"])
    print(f"median work {small * 1e-3:.2f} us and {large * 1e-3:.2f} us (-u {args['us']}), "
          f"{share:.3f} of the time outside MPI; the machine took {added:.3f} of the run")
    record(args, f"work_share_{args['us']}us", share)
    record(args, f"work_ratio_{args['us']}us", large / small)
    # CPU time can only fall short of the time outside MPI by what the rank
    # spent off its CPU, which the machine's measured share bounds.
    if not 1.0 - WORK_SHARE_TOLERANCE - added <= share <= 1.0 + WORK_SHARE_TOLERANCE:
        fail(f"work is {share:.3f} of the time outside MPI")
    if abs(large / small - 2.0) > WORK_RATIO_TOLERANCE:
        fail(f"2x iterations show {large / small:.2f}x the work of 1x ones")


def check_schema(f, args):
    quantized, features = metric_names()
    required = ["segments/duration_s", "segments/duration_upper_s", "segments/work", "segments/signature",
                "segments/late_rank", "segments/closing_call", "ranks/hostname", "ranks/node_id",
                "ranks/local_rank", "detail/ranks", "detail/signature_index", "detail/signatures",
                "configuration/name", "configuration/value", "call_names"]
    required += [f"bins/{m}/{field}" for m in quantized for field in ("code", "count", "value")]
    required += [f"detail/{m}" for m in quantized] + [f"totals/{m}" for m in quantized + features]
    missing = [name for name in required if name not in f]
    if missing:
        fail(f"missing datasets: {missing}")
    for attribute in ["tremor_version", "schema_version", "command_line", "mpi_library_version", "world_size",
                      "counter_source", "counter_unit", "start_time_unix", "end_time_unix", "run_time_s"]:
        if attribute not in f.attrs:
            fail(f"missing attribute {attribute}")
    names = [text(n) for n in f["configuration/name"][:]]
    if "TREMOR_OUTPUT_DIR" not in names or "TREMOR_SEED" not in names:
        fail(f"effective configuration incomplete: {names}")


def check_stacked(f, args):
    """Profiler + injector on POSIX I/O: the truth is the injector's own log
    (tremor-inject_*.csv beside the run file); /injection, the profiler's copy
    of it, holds the same delays, and the profiler's I/O time on the injected
    rank equals the delays spent there plus the real I/O."""
    rank = int(args["rank"])
    logs = injected_truth.read_logs(os.path.dirname(f.filename))
    logged = [row for rows in logs.values() for row in rows if row["spent_us"] > 0]
    calls = [text(c) for c in f["injection/call"][:]]
    ranks = f["injection/rank"][:]
    spent = f["injection/spent_us"][:]
    if not logged:
        fail("the injector logged no delay")
    if sorted((r["rank"], r["call"], round(r["spent_us"], 3)) for r in logged) != \
            sorted(zip(ranks.tolist(), calls, np.round(spent, 3).tolist())):
        fail(f"/injection ({len(calls)} records) differs from the injector's log ({len(logged)} delays)")
    if {r["rank"] for r in logged} != {rank}:
        fail(f"injections on ranks {sorted({r['rank'] for r in logged})}, expected only {rank}")
    # Only the application's calls count: PAPI's start-up reads /proc with
    # fopen while the injector is already active, and Tremor does not record
    # its own I/O as the application's.
    allowed = set(args["calls"].split(","))
    ours = [r for r in logged if r["call"] in allowed]
    print("injected calls:", {c: sum(r["call"] == c for r in logged) for c in sorted({r["call"] for r in logged})})
    row = list(f["detail/ranks"][:]).index(rank)
    measured = detail_values(f, "io_time")[row].sum()
    truth = sum(r["spent_us"] for r in ours) * 1e-6
    segments = f["segments/duration_s"].shape[0]
    # Above the truth: the real I/O of the demo's open/write/close calls (tens of
    # µs each on a local file system, 3 per checkpoint: 2e-4 s per segment at
    # most) and the timer's granularity (2 % of the sleeps, 2 ms in all).
    low, high = truth, truth * 1.02 + 2e-4 * segments + 2e-3
    print(f"profiler I/O time on rank {rank}: {measured:.4f} s; injected: {truth:.4f} s")
    if not low <= measured <= high:
        fail(f"measured {measured:.4f} s outside [{low:.4f}, {high:.4f}] for {truth:.4f} s injected")
    # The truth per segment: each delay is tagged with the profiler's segment, and
    # that segment's I/O time on the rank holds it (bins are within a few %).
    tags = np.array([r["segment"] for r in ours])
    if tags.min() < 0 or tags.max() >= segments:
        fail(f"injection segments {tags.min()}..{tags.max()} outside 0..{segments - 1}")
    per_segment = np.bincount(tags, weights=[r["spent_us"] * 1e-6 for r in ours], minlength=segments)
    io_time = detail_values(f, "io_time")[row]
    short = [(s, io_time[s], per_segment[s]) for s in range(segments) if io_time[s] < 0.9 * per_segment[s] - 1e-4]
    if short:
        fail(f"segments whose I/O time is below their injected delay (segment, io s, injected s): {short[:5]}")
    print(f"{np.count_nonzero(per_segment)} segments hold injected delays; each segment's I/O time covers them")


def check_tremor_io_untouched(f, args):
    """Profiler + injector tracing and delaying every POSIX call, on an
    application that writes no file: Tremor's own writes (its spill, appended
    during the run) never reach the injector, so its logs hold no write."""
    segments = f["segments/duration_s"].shape[0]
    if segments < int(args["segments"]):
        fail(f"{segments} segments recorded, expected at least {args['segments']} (a spill block is 2048)")
    logs = injected_truth.read_logs(os.path.dirname(f.filename))
    if not logs:
        fail("no injector log beside the run file")
    writes = [row for rows in logs.values() for row in rows if row["call"] in ("write", "pwrite", "pwrite64", "writev")]
    print(f"posix calls the injector saw: {sum(len(rows) for rows in logs.values())}, writes among them: {len(writes)}")
    if writes:
        fail(f"the injector saw {len(writes)} writes of an application that writes no file (Tremor's own): "
             f"{writes[:2]}")


def check_fortran(f, args):
    """test/apps/fortran_*: each call seen exactly once whatever the binding style."""
    n = int(args["iterations"])
    segments = f["segments/duration_s"].shape[0]
    if segments != n + 1:
        fail(f"expected {n + 1} segments, found {segments}")
    for r, rows in enumerate(per_rank_features(f)):
        for s, feats in enumerate(rows[:n]):
            # segment 0 also holds MPI_Comm_split's setup; every later one: one
            # world Allreduce (8 bytes, the boundary) + one Barrier on a half.
            if s > 0 and (feats["coll_all_to_all"], feats["bytes_sent"]) != (2, 8):
                fail(f"rank row {r} segment {s}: {feats['coll_all_to_all']} collectives, "
                     f"{feats['bytes_sent']} bytes sent; expected 2 and 8 (counted once)")


def busy_cpu_seconds():
    """CPU time the whole machine spent busy so far (/proc/stat, all CPUs), s."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def check_offline(f, args):
    """`tremor analyze --json FILE` reproduces the in-process JSON exactly."""
    result = subprocess.run([args["tremor"], "analyze", "--json", f.filename], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"tremor analyze failed: {result.stderr}")
    if json.loads(result.stdout) != report_of(f):
        fail("offline report differs from the in-process report")
    # Schema 3: one bin per log code, ascending; --bins derives the paper's coarser bins from them.
    codes = f["bins/duration/code"][:]
    if len(codes) < 2 or not (np.diff(codes.astype(np.int64)) > 0).all():
        fail(f"/bins/duration/code is not ascending with several codes: {codes[:10]}")
    coarse = subprocess.run([args["tremor"], "analyze", "--json", "--bins", "2", f.filename], capture_output=True,
                            text=True)
    if coarse.returncode != 0:
        fail(f"tremor analyze --bins 2 failed: {coarse.stderr}")
    coarse_report, report = json.loads(coarse.stdout), report_of(f)
    keys = ("lost_percent", "intrinsic_run_time_s", "paper_mad4_percent")
    if coarse_report["segments"] != report["segments"] or all(coarse_report[k] == report[k] for k in keys):
        fail("--bins 2 should analyse the same segments with coarser values")


CHECKS = {"switch_records": lambda f, args: check_switch_records(f, args, args.get("source", "cputime")),
          "work": check_work, "planted": check_planted, "quiet": check_quiet, "offline": check_offline, "fortran": check_fortran, "stacked": check_stacked, "bsp": check_bsp, "segments": check_segments, "io": check_io, "sde": check_sde, "schema": check_schema,
          "oversubscribed_clean": check_oversubscribed_clean, "tremor_io_untouched": check_tremor_io_untouched,
          "own_sleep": lambda f, args: own_sleep.check_own_sleep(f, args, fail)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--check", action="append", required=True, choices=sorted(CHECKS))
    parser.add_argument("--arg", action="append", default=[])
    parser.add_argument("--calibrate", type=int, default=0, metavar="N",
                        help="run N times and print the figures the tolerances are derived from")
    add_launch_arguments(parser)
    opts = parser.parse_args()
    program = launched_program(opts)
    if opts.calibrate:
        calibrate(opts, program)
        return
    try:
        machine = run_and_check(opts, program)
    except (CheckFailed, MachineLoadError) as error:
        print(f"CHECK FAILED: {error}")
        sys.exit(1)
    print(f"checks passed: {', '.join(opts.check)}; {machine}")


def run_job(opts, program, out):
    env = dict(os.environ, TREMOR_OUTPUT_DIR=out, LD_PRELOAD=opts.preload, TREMOR_REPORT="none")
    env.update(kv.split("=", 1) for kv in opts.env)
    busy_before, wall_before = busy_cpu_seconds(), time.monotonic()
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result, load = run_preloaded_measured(mpi_command(opts.launcher, opts.np, program), env, timeout=300)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    job_cpu = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    capacity = (time.monotonic() - wall_before) * (os.cpu_count() or 1)
    other_cpu_share = max(0.0, busy_cpu_seconds() - busy_before - job_cpu) / capacity if capacity > 0 else 0.0
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        fail(f"{' '.join(result.args)} exited with {result.returncode}")
    files = glob.glob(os.path.join(out, "*.h5"))
    if len(files) != 1:
        fail(f"expected one run file in {out}, found {files}")
    args = dict(kv.split("=", 1) for kv in opts.arg)
    args.update(np=opts.np, stderr=result.stderr, stdout=result.stdout, load=load, checks=opts.check,
                other_cpu_share=other_cpu_share, perf_refusal=perf_switch_records_refusal())
    return files[0], args


def run_and_check(opts, program):
    with tempfile.TemporaryDirectory(prefix="tremor-test-") as out:
        path, args = run_job(opts, program, out)
        with h5py.File(path, "r") as f:
            for check in opts.check:
                CHECKS[check](f, args)
            # Tests that use no band need no count of the machine's share (a short run may have none).
            error = args["load"].error()
            return args["load"].describe(float(f.attrs["run_time_s"])) if error is None else \
                f"the machine's share not measured: {error}"


def calibrate(opts, program):
    """--calibrate N: the figures the checks record (args["figures"]), per run, with
    the machine's share of the run, and their mean and SD over the quiet runs."""
    rows = []
    for run in range(opts.calibrate):
        with tempfile.TemporaryDirectory(prefix="tremor-calibrate-") as out:
            path, args = run_job(opts, program, out)
            args["figures"] = {}
            with h5py.File(path, "r") as f:
                for check in opts.check:
                    try:
                        CHECKS[check](f, args)
                    except (CheckFailed, MachineLoadError) as error:
                        print(f"run {run}: {check}: {error}")
                try:
                    share = args["load"].percent(float(f.attrs["run_time_s"]))
                except MachineLoadError:
                    share = float("inf")  # unmeasured: left out of the quiet rows
                row = dict(args["figures"], machine_percent=share)
        print(f"run {run}: {row}", flush=True)
        rows.append(row)
    print_calibration(rows)



if __name__ == "__main__":
    main()
