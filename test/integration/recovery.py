#!/usr/bin/env python3
"""Crash recovery and a full file system (issue 10 rows).

usage: recovery.py --case CASE --launcher CMD --np N --preload LIB --tremor TREMOR -- BSP_DEMO ARGS
CASE:
  abort     the last rank calls MPI_Abort after iteration I
  exit      every rank exits without MPI_Finalize after iteration I
  kill      the last rank SIGKILLs itself after iteration I
            each: the launcher returns within the timeout, every rank's spill
            file exists (mode 0644), `tremor analyze --recover` prints a report
            marked PARTIAL with the reason and writes a new run file marked
            partial with at least I segments (I+1 for exit)
  finished  a normal run removes its spill files once the run file is written
  full-fs   RLIMIT_FSIZE set right after MPI_Init (bsp_demo -L), and a small
            tmpfs when mounting works (root, as on CI): the
            application's stdout and exit status are those of a run without
            Tremor under the same limit, one message says the run file was not
            written, the report is still printed, no run file is left half
            written, and the kept spill files are recoverable
I is given as --at (default 30); BSP_DEMO ARGS must not include -F.
"""
import argparse
import glob
import os
import stat
import subprocess
import sys
import tempfile

import h5py

from launch import add_launch_arguments, environment_without_tremor, launched_program, mpi_command, run_preloaded
from robustness import finish  # same folder: the shared verdict

LAUNCH_TIMEOUT_S = 60
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(command, env, timeout=LAUNCH_TIMEOUT_S):
    try:
        return run_preloaded(command, env, timeout,
                             preexec_fn=lambda: os.umask(0))  # files show the mode Tremor asked for
    except subprocess.TimeoutExpired as hang:
        check(False, f"{' '.join(hang.cmd)} did not return within {timeout} s (hang)")
        return None


def spill_files(directory):
    return sorted(glob.glob(os.path.join(directory, "*.spill")))


def recover(tremor, names, out, reason_words, code, at_least):
    result = run([tremor, "analyze", "--recover", *names], dict(os.environ), timeout=120)
    if result is None or not check(result.returncode == 0, f"recover failed: {result.stderr}"):
        return
    text = result.stdout
    check("PARTIAL RUN (reason: " + reason_words in text, f"report not marked partial ({reason_words}): {text[:400]}")
    recovered = glob.glob(os.path.join(out, "*-recovered-*.h5"))
    if not check(len(recovered) == 1, f"expected one recovered run file, found {recovered}"):
        return
    check(recovered[0] in text, "the report does not name the recovered run file")
    with h5py.File(recovered[0], "r") as f:
        check(int(f.attrs["partial"]) == 1, "recovered file not marked partial")
        reason = f.attrs["partial_reason"]
        reason = reason.decode() if isinstance(reason, bytes) else str(reason)
        check(reason == code, f"partial_reason {reason!r} != {code!r}")
        segments = f["segments/duration_s"].shape[0]
        check(segments >= at_least, f"{segments} segments recovered, expected at least {at_least}")
        check("analysis" in f, "recovered file has no /analysis")
    print(f"recovered {segments} segments, reason {reason}")


def crash_case(opts, command, tremor_env, out):
    how = opts.case
    result = run(command + ["-F", f"{how}:{opts.at}"], tremor_env)
    if result is None:
        return
    files = spill_files(out)
    if not check(len(files) == opts.np, f"expected {opts.np} spill files, found {files}"):
        return
    for path in files:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        check(mode == 0o644, f"{path} has mode {oct(mode)}, expected 0644")
    check(not glob.glob(os.path.join(out, "*.h5")), "a run file was written although the run never finalized")
    reason_words, code = {"abort": ("MPI_Abort", "abort"),
                          "exit": ("exit without MPI_Finalize", "exit_without_finalize"),
                          "kill": ("unknown", "unknown")}[how]
    # Iterations 0..I closed I+1 boundaries on the rank that ended the run;
    # the others are only sure to have closed boundary I-1 before it (the
    # abort or kill may stop them inside collective I), with
    # TREMOR_SPILL_INTERVAL=0 each boundary is on disk when it closes.
    expected = opts.at + 1 if how == "exit" else opts.at
    # One spill file names the run: its siblings are found.
    recover(opts.tremor, [files[-1]], out, reason_words, code, expected)


def full_fs_case(opts, command, base_env, tremor_env, out):
    # MPICH's shared-memory files at MPI_Init need megabytes, so the limit is
    # set by the application right after MPI_Init (bsp_demo -L): the file
    # system "fills up" during the run. Both runs live under the same limit.
    limited = command + ["-L", str(opts.fsize)]
    plain = run(limited, base_env)
    loaded = run(limited, tremor_env)
    if plain is None or loaded is None:
        return
    check((loaded.stdout, loaded.returncode) == (plain.stdout, plain.returncode),
          f"application changed under RLIMIT_FSIZE: {plain.stdout!r}/{plain.returncode} vs "
          f"{loaded.stdout!r}/{loaded.returncode}; stderr {loaded.stderr[-600:]}")
    check("interference report" in loaded.stderr, "the report was not printed")
    mentions = [l for l in loaded.stderr.splitlines() if "cannot write" in l and ".h5" in l]
    check(len(mentions) == 1 and "File too large" in mentions[0],
          f"expected one message that the run file could not be written (EFBIG), got {mentions}")
    check(mentions and "--recover" in mentions[0], "the message does not say how to recover")
    check(not glob.glob(os.path.join(out, "*.h5")) and not glob.glob(os.path.join(out, "*.json")),
          "a half-written or empty output file was left")
    print(f"RLIMIT_FSIZE {opts.fsize}: {mentions}")
    if check(len(spill_files(out)) == opts.np, f"spill files not kept: {spill_files(out)}"):
        recover(opts.tremor, [spill_files(out)[0]], out, "MPI_Finalize ran", "finalize_unsaved", 2)

    # A limit the spill itself reaches mid-run: each rank says so once, the
    # records before stay readable, the application and the report unchanged.
    tiny = command + ["-L", str(opts.fsize // 4)]
    plain_tiny, loaded_tiny = run(tiny, base_env), run(tiny, tremor_env)
    if plain_tiny is not None and loaded_tiny is not None:
        check((loaded_tiny.stdout, loaded_tiny.returncode) == (plain_tiny.stdout, plain_tiny.returncode),
              f"application changed when the spill hit the limit: {loaded_tiny.stdout!r}/{loaded_tiny.returncode}")
        check("interference report" in loaded_tiny.stderr, "the report was not printed when the spill hit the limit")
        stopped = [l for l in loaded_tiny.stderr.splitlines() if "spill" in l and "stopped (File too large)" in l]
        check(1 <= len(stopped) <= opts.np, f"expected one spill message per rank at most, got {stopped}")

    # A small tmpfs: ENOSPC instead of EFBIG (needs root, as on CI).
    mount_point = tempfile.mkdtemp(prefix="tremor-tmpfs-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={opts.tmpfs_kib}k", "tmpfs", mount_point],
                             capture_output=True).returncode == 0
    if not mounted:
        print("tmpfs: mount not permitted here, RLIMIT_FSIZE only")
        os.rmdir(mount_point)
        return
    try:
        plain = run(command, base_env)
        small = run(command, dict(tremor_env, TREMOR_OUTPUT_DIR=mount_point))
        if plain is not None and small is not None:
            check((small.stdout, small.returncode) == (plain.stdout, plain.returncode),
                  f"application changed on a full tmpfs: {small.stdout!r}/{small.returncode}")
            check("interference report" in small.stderr, "tmpfs: the report was not printed")
            full = [l for l in small.stderr.splitlines() if "cannot write" in l and ".h5" in l]
            check(len(full) == 1, f"tmpfs: expected one message about the run file, got {full}")
            check(not glob.glob(os.path.join(mount_point, "*.h5")) and
                  not glob.glob(os.path.join(mount_point, "*.json")),
                  "tmpfs: a half-written or empty output file was left")
            print(f"tmpfs {opts.tmpfs_kib} KiB: {full}")
    finally:
        subprocess.run(["umount", mount_point])
        os.rmdir(mount_point)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=["abort", "exit", "kill", "finished", "full-fs"])
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--at", type=int, default=30)
    parser.add_argument("--fsize", type=int, default=32 * 1024)
    parser.add_argument("--tmpfs-kib", type=int, default=48)
    add_launch_arguments(parser)
    opts = parser.parse_args()
    command = mpi_command(opts.launcher, opts.np, launched_program(opts))
    base = environment_without_tremor()
    with tempfile.TemporaryDirectory(prefix="tremor-recovery-") as out:
        tremor_env = dict(base, LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=out, TREMOR_SPILL_INTERVAL="0")
        if opts.case in ("abort", "exit", "kill"):
            crash_case(opts, command, tremor_env, out)
        elif opts.case == "finished":
            result = run(command, tremor_env)
            if result is not None:
                check(result.returncode == 0, f"exit status {result.returncode}")
                check(len(glob.glob(os.path.join(out, "*.h5"))) == 1, "no run file")
                check(not spill_files(out), f"spill files left after a complete run: {spill_files(out)}")
        else:
            full_fs_case(opts, command, base, tremor_env, out)
    finish(opts.case, failures)


if __name__ == "__main__":
    main()
