#!/usr/bin/env python3
"""Runs an MPI program with Tremor preloaded and checks the run file exactly.

usage:
  check_coverage.py expect --launcher CMD --np N --preload LIB [--stdout-regex RE] -- PROGRAM ARGS...
      The program writes what it did, per segment, into $COVERAGE_EXPECT_DIR/expect-<rank>.json
      (expect.h). Every detail rank's segment count, closing calls and all 16 features of every
      segment (absent ones expected 0), and the per-rank totals, must match exactly, except
      features named by --ignore-feature-prefix (for a known, reported defect only).
  check_coverage.py application --launcher CMD --np N --preload LIB --counter LIB
                    [--input DIR] [--ignore-line RE]... [--compare-file NAME]... -- PROGRAM ARGS...
      Runs a real application three times in fresh copies of DIR: plain, with Tremor, and with
      the independent boundary counter (boundary_counter.c). Its stdout must be identical with
      and without Tremor (lines matching an --ignore-line RE are dropped first: timings), so must
      each --compare-file the application writes into its working directory (its results), and
      Tremor's segment count must equal the counted world-spanning collectives + 1 on every rank.
The launcher words are one --launcher string (split on spaces). Exit 0 on success.
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from launch import mpi_command, run_preloaded  # noqa: E402
from run_app import CheckFailed, fail, per_rank_features, text  # noqa: E402  (shared with the integration tests)


def run(opts, program, env_extra, cwd=None, timeout=240):
    env = dict(os.environ, TREMOR_REPORT="none")
    env.pop("LD_PRELOAD", None)
    env.update(env_extra)
    result = run_preloaded(mpi_command(opts.launcher, opts.np, program), env, timeout, cwd=cwd)
    if result.returncode != 0:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        fail(f"{' '.join(result.args)} exited with {result.returncode}")
    return result


def single_run_file(directory):
    files = glob.glob(os.path.join(directory, "*.h5"))
    if len(files) != 1:
        fail(f"expected one run file in {directory}, found {files}")
    return files[0]


def check_expect(opts, program):
    with tempfile.TemporaryDirectory(prefix="tremor-coverage-") as out:
        result = run(opts, program, {"TREMOR_OUTPUT_DIR": out, "LD_PRELOAD": opts.preload,
                                     "COVERAGE_EXPECT_DIR": out})
        sys.stdout.write(result.stdout)
        if opts.stdout_regex and not re.search(opts.stdout_regex, result.stdout):
            fail(f"stdout does not match {opts.stdout_regex!r}")
        with h5py.File(single_run_file(out), "r") as f:
            closing = [text(f["call_names"][c]) for c in f["segments/closing_call"][:]]
            detail_ranks = [int(r) for r in f["detail/ranks"][:]]
            if len(detail_ranks) != opts.np:
                fail(f"expected detail for all {opts.np} ranks, found {detail_ranks}")
            features = per_rank_features(f)
            for row, rank in enumerate(detail_ranks):
                with open(os.path.join(out, f"expect-{rank}.json")) as stream:
                    expected = json.load(stream)["segments"]
                got = features[row]
                if len(got) != len(expected):
                    fail(f"rank {rank}: {len(got)} segments recorded, {len(expected)} expected "
                         f"(closing calls recorded: {closing})")
                wanted_closing = [e["closing_call"] for e in expected]
                if closing != wanted_closing:
                    fail(f"closing calls {closing} != expected {wanted_closing}")
                totals = {}
                ignored = tuple(opts.ignore_feature_prefix)
                for s, (have, want) in enumerate(zip(got, expected)):
                    have = {k: v for k, v in have.items() if not k.startswith(ignored)}
                    want_all = {name: int(want.get(name, 0)) for name in have}
                    if have != want_all:
                        diff = {k: (have[k], want_all[k]) for k in have if have[k] != want_all[k]}
                        fail(f"rank {rank} segment {s} (closed by {closing[s]}): recorded vs expected {diff}")
                    for name, value in want_all.items():
                        totals[name] = totals.get(name, 0) + value
                for name, value in totals.items():
                    recorded = int(f[f"totals/{name}"][rank])
                    if recorded != value:
                        fail(f"rank {rank}: /totals/{name} {recorded} != {value}")
    print(f"exact per-segment features verified for {opts.np} ranks, {len(closing)} segments")


def filtered(stdout, patterns):
    return [line for line in stdout.splitlines() if not any(re.search(p, line) for p in patterns)]


def check_application(opts, program):
    with tempfile.TemporaryDirectory(prefix="tremor-app-") as scratch:
        def fresh(name):
            directory = os.path.join(scratch, name)
            if opts.input:
                shutil.copytree(opts.input, directory)
            else:
                os.makedirs(directory)
            return directory

        plain = run(opts, program, {}, cwd=fresh("plain"))
        out = os.path.join(scratch, "tremor-output")
        os.makedirs(out)
        traced = run(opts, program, {"TREMOR_OUTPUT_DIR": out, "LD_PRELOAD": opts.preload}, cwd=fresh("tremor"))
        counted = run(opts, program, {"LD_PRELOAD": opts.counter}, cwd=fresh("counter"))

        plain_lines, traced_lines = filtered(plain.stdout, opts.ignore_line), filtered(traced.stdout, opts.ignore_line)
        if not plain_lines:
            fail("the application printed nothing to compare")
        # Every rank writes to the launcher's merged stdout, so the order in
        # which two ranks' lines interleave depends on timing (seen once in
        # about 10 runs): compare the lines as a multiset, exactly.
        if sorted(plain_lines) != sorted(traced_lines):
            missing = sorted(set(plain_lines) - set(traced_lines))
            extra = sorted(set(traced_lines) - set(plain_lines))
            print(f"lines only without Tremor: {missing[:3]}\nlines only with Tremor: {extra[:3]}")
            fail(f"stdout differs with Tremor ({len(plain_lines)} vs {len(traced_lines)} compared lines)")

        for name in opts.compare_file:
            with open(os.path.join(scratch, "plain", name), "rb") as a, open(os.path.join(scratch, "tremor", name), "rb") as b:
                if a.read() != b.read():
                    fail(f"{name} differs with Tremor")

        counts = {int(r): int(n) for r, n in re.findall(r"^boundary_counter rank (\d+) boundaries (\d+)$",
                                                        counted.stderr, re.M)}
        if sorted(counts) != list(range(opts.np)):
            fail(f"boundary counter reported ranks {sorted(counts)}: {counted.stderr[-2000:]}")
        with h5py.File(single_run_file(out), "r") as f:
            segments = f["segments/duration_s"].shape[0]
            closing = [text(f["call_names"][c]) for c in f["segments/closing_call"][:]]
        for rank, boundaries in counts.items():
            if segments != boundaries + 1:
                fail(f"rank {rank}: {boundaries} world-spanning collectives counted, Tremor has {segments} segments")
        calls = sorted(set(closing))
    print(f"stdout identical over {len(plain_lines)} lines, files {opts.compare_file} identical; {segments} segments = {segments - 1} boundaries "
          f"+ 1 on all {opts.np} ranks (closing calls: {calls})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["expect", "application"])
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--stdout-regex")
    parser.add_argument("--ignore-feature-prefix", action="append", default=[])
    parser.add_argument("--counter")
    parser.add_argument("--input")
    parser.add_argument("--ignore-line", action="append", default=[])
    parser.add_argument("--compare-file", action="append", default=[])
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:split])
    program = argv[split + 1:]
    if not program:
        fail("no program given after --")
    if opts.mode == "expect":
        check_expect(opts, program)
    else:
        if not opts.counter:
            fail("application mode needs --counter")
        check_application(opts, program)


if __name__ == "__main__":
    try:
        main()
    except CheckFailed:
        sys.exit(1)
