#!/usr/bin/python3
"""Builds the fuzzing inputs that are made from other inputs or by the
profiler (run with /usr/bin/python3, which has h5py); the output is committed.

usage: make_inputs.py
       make_inputs.py spill --launcher CMD --preload LIB --app BSP_DEMO

From the run-file seeds in corpus/run_file/ (files written by this Tremor):
- corpus/compare/: pairs of run files joined by the compare harness's
  separator (fuzz_support.hpp);
- regressions/run_file/: the three faults of issue 39, rebuilt (the original
  inputs were not kept):
  vlen_heap_length_huge.h5, vlen_heap_length_negative.h5: the command line
  stored as a variable-length string (as Tremor wrote attributes before
  2026-11-23) whose object in HDF5's global heap claims 500 GB or -2^62
  bytes; HDF5 1.10 copied that many (ASan: memcpy-param-overlap in
  H5HG_read). The reader now refuses variable-length strings;
  invalid_utf8_strings.h5: the command line, the ranks' host names and the
  recorded environment values hold bytes that are not UTF-8; the JSON
  report threw nlohmann's type_error 316 and terminated. Now replaced by
  U+FFFD (tremor::json_text);
- regressions/compare/: the invalid UTF-8 run compared with a good one.
HDF5 stamps modification times into the files, so a rebuild differs from the
committed files in a few bytes.

spill: corpus/spill/, the spill files the profiler itself writes (its own
writer, interpose/spill_writer.cpp) in tiny bsp_demo runs that end without a
run file, each run's rank files joined by the separator: an abort with a block
per boundary and several segment kinds, an exit with one block, and a single
rank killed (no end record). Their headers hold this machine's environment
facts; a rebuild differs in them, the times and the values.
"""
import argparse
import glob
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_SEPARATOR = b"\0TREMOR-FUZZ-NEXT-RUN\0"  # kRunSeparator in fuzz_support.hpp
BASE = "bsp_demo_two_ranks.h5"
SECOND = "sample_run_all_groups.h5"
MARKER = "tremor-fuzz-vlen-marker"
INVALID = b"\xff\xfe\xc3(\xed\xa0\x80\xf8"  # never UTF-8, a lead without continuation, a surrogate, a 5-byte lead


def copy_of(source, target):
    shutil.copyfile(source, target)
    return target


def vlen_command_line(path, claimed_length):
    """Rewrites /@command_line as a variable-length string, then makes its
    global-heap object claim claimed_length bytes (a 64-bit field)."""
    with h5py.File(path, "r+") as f:
        del f.attrs["command_line"]
        f.attrs.create("command_line", MARKER, dtype=h5py.string_dtype("utf-8"))
    data = bytearray(open(path, "rb").read())
    # A global heap object: index (2), references (2), reserved (4), size (8), data.
    at = data.find(MARKER.encode())
    if at < 16 or struct.unpack_from("<Q", data, at - 8)[0] != len(MARKER) or data.find(b"GCOL") < 0:
        sys.exit(f"{path}: the global heap object of the command line was not found")
    struct.pack_into("<Q", data, at - 8, claimed_length & 0xFFFFFFFFFFFFFFFF)
    open(path, "wb").write(bytes(data))


def fixed(values):
    width = max(1, max(len(value) for value in values))
    return np.array(values, dtype=f"S{width}"), h5py.string_dtype("utf-8", width)


def invalid_utf8_strings(path):
    with h5py.File(path, "r+") as f:
        command = b"./app --name=" + INVALID
        del f.attrs["command_line"]
        value, dtype = fixed([command])
        f.attrs.create("command_line", value[0], dtype=dtype)
        for dataset in ("ranks/hostname", "environment/ranks/hostname", "environment/nodes/hostname",
                        "environment/variables/value"):
            if dataset not in f:
                sys.exit(f"{path}: no /{dataset} to rewrite")
            count = len(f[dataset])
            del f[dataset]
            value, dtype = fixed([b"node" + INVALID + bytes([48 + i % 10]) for i in range(count)])
            written = f.create_dataset(dataset, shape=value.shape, dtype=dtype)
            # In the file's own type: HDF5 converts no character sets.
            written.id.write(h5py.h5s.ALL, h5py.h5s.ALL, value, mtype=written.id.get_type())


def build(out):
    seeds = os.path.join(HERE, "corpus", "run_file")
    base, second = os.path.join(seeds, BASE), os.path.join(seeds, SECOND)
    runs = os.path.join(out, "regressions", "run_file")
    compare_seeds = os.path.join(out, "corpus", "compare")
    compare_regressions = os.path.join(out, "regressions", "compare")
    for folder in (runs, compare_seeds, compare_regressions):
        os.makedirs(folder, exist_ok=True)
    vlen_command_line(copy_of(base, os.path.join(runs, "vlen_heap_length_huge.h5")), 500 * 10**9)
    vlen_command_line(copy_of(base, os.path.join(runs, "vlen_heap_length_negative.h5")), -(2**62))
    invalid = copy_of(base, os.path.join(runs, "invalid_utf8_strings.h5"))
    invalid_utf8_strings(invalid)
    read = lambda path: open(path, "rb").read()
    pairs = {"real_and_sample": (base, second), "real_twice": (base, base), "sample_three": (second, second, second)}
    for name, files in pairs.items():
        with open(os.path.join(compare_seeds, name), "wb") as handle:
            handle.write(RUN_SEPARATOR.join(read(path) for path in files))
    with open(os.path.join(compare_regressions, "invalid_utf8_strings"), "wb") as handle:
        handle.write(RUN_SEPARATOR.join([read(base), read(invalid)]))


# name: (processes, bsp_demo arguments, settings); none writes a run file.
# About 40 segments: groups large enough for the analysis to estimate.
SPILL_RUNS = {
    "abort_two_ranks": (2, ["-n", "60", "-k", "7", "-F", "abort:40"], {"TREMOR_SPILL_INTERVAL": "0"}),
    "exit_two_ranks": (2, ["-n", "60", "-k", "0", "-F", "exit:40"], {}),
    "killed_one_rank": (1, ["-n", "60", "-k", "9", "-F", "kill:40"], {"TREMOR_SPILL_INTERVAL": "0"}),
}


def spill_seeds(opts, out):
    seeds = os.path.join(out, "corpus", "spill")
    os.makedirs(seeds, exist_ok=True)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_")}
    for name, (processes, arguments, settings) in SPILL_RUNS.items():
        with tempfile.TemporaryDirectory(prefix="tremor-spill-seed-") as scratch:
            env = dict(base_env, LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=scratch, TREMOR_REPORT="none", **settings)
            command = shlex.split(opts.launcher) + ["-n", str(processes), opts.app, "-u", "100", "-b", "64", "-q",
                                                    "-O", scratch] + arguments
            subprocess.run(command, env=env, capture_output=True, timeout=120)
            spills = sorted(glob.glob(os.path.join(scratch, "*.spill")))
            if len(spills) != processes:
                sys.exit(f"{name}: {' '.join(command)} left {spills}, expected {processes} spill files")
            pieces = [open(path, "rb").read() for path in spills]
        with open(os.path.join(seeds, name), "wb") as handle:
            handle.write(RUN_SEPARATOR.join(pieces))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", nargs="?", choices=["spill"])
    parser.add_argument("--launcher")
    parser.add_argument("--preload")
    parser.add_argument("--app")
    opts = parser.parse_args()
    if opts.what == "spill":
        if not (opts.launcher and opts.preload and opts.app):
            parser.error("spill needs --launcher, --preload and --app")
        spill_seeds(opts, HERE)
    else:
        build(HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
