#!/usr/bin/env python3
"""`tremor watch` on torn and hostile spill files (issue 51), and its
Prometheus file read while it is replaced.

usage: watch_input.py --launcher CMD --np N --preload LIB --tremor TREMOR -- BSP_DEMO

One short demo run whose last rank SIGKILLs itself (bsp_demo -F kill) leaves
real spill files (appended at every boundary); each case works on a copy:
  recover    `tremor watch DIR --once --json` gives the figures of
             `tremor analyze --recover` on the same files (lost %, interval,
             segments). Fails a watch that analyses other segments than the
             common prefix or with other parameters.
  per_node   each rank's file in its own directory (per-node output), both
             directories named: the same figures as one directory's. Fails a
             watch that reads only the first directory.
  torn       one rank's file cut in the middle of its last block (a kill during
             write): the watch reads up to the last complete block, so its
             segments are the complete blocks' common prefix and its figure is
             --recover's. Fails a reader that refuses the file or counts the
             torn block.
  missing    a rank's file removed, or cut inside its header: exit status 2, a
             "problem" naming why, never a crash (status 70 or a signal).
  two_jobs   a second run's files (another stem, newer) in the directory: the
             watch follows the newest and says so on stderr; given a stem, it
             follows that one. Fails a watch that mixes the two runs' ranks.
  vanish     a thread renames rank files away and back while the watch is run
             40 times: each run exits 0 with one JSON object or 2 with a reason,
             never a crash. Fails a reader without its child process or its catch.
  garbage    random bytes named like a spill file: exit 2, no crash.
  follow     one watch (--interval 0.2) follows a copy while it changes under
             it: the files cut to their first half, then a torn half block
             appended, then the rest; one rank's file truncated below what was
             read; one replaced (rename) by a file damaged in an early block.
             After each change
             its figures equal a fresh `tremor watch --once` on the same files.
             Fails a watch that reads only the appended bytes without
             re-reading a truncated or replaced file, or loses a block torn
             across two refreshes.
  prom       `--prom FILE --interval 0.1` for 100 refreshes (the files kept
             fresh by a toucher, so the job looks alive) while a reader loop
             parses FILE with a strict parser of the text exposition format:
             every read parses and holds the three metrics. Fails a writer that
             writes FILE in place (a reader sees it empty or half-written).
             An existing FILE the watch did not write is refused (exit 4) and
             left as it was. Fails a watch that replaces any FILE.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

from launch import add_launch_arguments, launched_program, mpi_command, run_preloaded
from recorded_checks import check, failures  # noqa: E402  (test/common, on launch's path)



def watch(tremor, *arguments, timeout=120):
    return subprocess.run([tremor, "watch", *arguments], capture_output=True, text=True, timeout=timeout)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def recover_figures(tremor, directory, stem, out):
    result = subprocess.run([tremor, "analyze", "--recover", os.path.join(directory, stem), "--json",
                             "--output-dir", out], capture_output=True, text=True, timeout=120)
    check(result.returncode == 0, f"analyze --recover failed: {result.stderr}")
    return json.loads(result.stdout) if result.returncode == 0 else {}


def same_figures(watched, recovered, case):
    for key in ("segments", "lost_percent", "lost_percent_ci", "class", "run_time_s"):
        check(watched.get(key) == recovered.get(key),
              f"{case}: watch {key} {watched.get(key)} != analyze --recover {recovered.get(key)}")


def complete_segments(path):
    """Segments in the file's complete blocks (docs/spill.md's layout)."""
    data = open(path, "rb").read()
    offset = 32 + struct.unpack_from("<I", data, 12)[0]
    segments = 0
    while offset + 32 <= len(data):
        tag, _, _, _, count, kinds, _ = struct.unpack_from("<IHHQIIQ", data, offset)
        end = offset + 32 + kinds * 136 + count * 16
        if end > len(data):
            break
        if tag == 0x334b4c42:
            segments += count
        offset = end
    return segments


def last_block_start(path):
    data = open(path, "rb").read()
    offset = 32 + struct.unpack_from("<I", data, 12)[0]
    start = None
    while offset + 32 <= len(data):
        tag, _, _, _, count, kinds, _ = struct.unpack_from("<IHHQIIQ", data, offset)
        if tag == 0x334b4c42:
            start = (offset, 32 + kinds * 136 + count * 16)
        offset += 32 + kinds * 136 + count * 16
    return start


def copy_run(source, name):
    target = tempfile.mkdtemp(prefix=f"watch-{name}-", dir=os.path.dirname(source))
    for path in glob.glob(os.path.join(source, "*.spill")):
        shutil.copy2(path, target)
    return target


def stem_in(directory):
    return os.path.basename(sorted(glob.glob(os.path.join(directory, "*.spill")))[0]).rsplit(".r", 1)[0]


def not_crashed(result, case):
    check(result.returncode in (0, 2), f"{case}: exit status {result.returncode} (crash?): {result.stderr[-400:]}")


# Strict parser of the text exposition format (the subset a textfile uses):
# HELP and TYPE before the samples of their metric, names and labels by the
# grammar, every line ending in a newline, finite or NaN sample values.
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\} '
                    r'(NaN|[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))$')


def parse_prometheus(text):
    if not text.endswith("\n"):
        raise ValueError("does not end with a newline (half-written?)")
    helped, typed, samples = set(), {}, []
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            helped.add(line.split(" ")[2])
        elif line.startswith("# TYPE "):
            parts = line.split(" ")
            if len(parts) != 4 or parts[3] not in ("gauge", "counter"):
                raise ValueError(f"bad TYPE line {line!r}")
            typed[parts[2]] = parts[3]
        else:
            match = SAMPLE.match(line)
            if not match:
                raise ValueError(f"bad sample line {line!r}")
            name = match.group(1)
            if name not in helped or name not in typed:
                raise ValueError(f"{name} has no HELP/TYPE before it")
            samples.append((name, match.group(2), float(match.group(3))))
    return typed, samples


def case_prom(tremor, source):
    directory = copy_run(source, "prom")
    prom = os.path.join(directory, "tremor.prom")
    with open(prom, "w") as foreign:  # not the watch's own file: never replaced
        foreign.write("somebody else's data\n")
    result = watch(tremor, directory, "--once", "--prom", prom)
    check(result.returncode == 4 and open(prom).read() == "somebody else's data\n",
          f"prom: a foreign file was replaced or not refused (exit {result.returncode})")
    os.remove(prom)
    stop = threading.Event()

    def toucher():  # the job looks alive: its files keep changing
        while not stop.is_set():
            for path in glob.glob(os.path.join(directory, "*.spill")):
                os.utime(path)
            time.sleep(0.1)

    reads, bad = [0], []

    def reader():
        while not stop.is_set():
            try:
                text = open(prom).read()
            except FileNotFoundError:
                continue
            reads[0] += 1
            try:
                typed, samples = parse_prometheus(text)
                names = {name for name, _, _ in samples}
                if names != {"tremor_lost_ratio", "tremor_node_impact_seconds", "tremor_segments_total"} and \
                        names != {"tremor_lost_ratio", "tremor_segments_total"}:
                    bad.append(f"metrics {sorted(names)}")
            except ValueError as error:
                bad.append(str(error))

    threads = [threading.Thread(target=toucher), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    process = subprocess.Popen([tremor, "watch", directory, "--json", "--interval", "0.1", "--until-finished",
                                "--prom", prom], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    refreshes = 0
    deadline = time.time() + 240
    while refreshes < 100 and time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        refreshes += 1
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    stop.set()
    for thread in threads:
        thread.join()
    check(refreshes >= 100, f"prom: only {refreshes} refreshes (stderr: {process.stderr.read()[-400:]})")
    check(reads[0] > 0, "prom: the reader never found the file")
    check(not bad, f"prom: {len(bad)} of {reads[0]} reads failed the strict parser, first: {bad[:1]}")
    check(not glob.glob(prom + ".tmp-*"), "prom: a temporary file was left behind")
    print(f"prom: {refreshes} refreshes, {reads[0]} reads, {len(bad)} failed the strict parser")


def block_ends(path):
    """Offsets where the file's complete blocks end."""
    data = open(path, "rb").read()
    offset = 32 + struct.unpack_from("<I", data, 12)[0]
    ends = []
    while offset + 32 <= len(data):
        _, _, _, _, count, kinds, _ = struct.unpack_from("<IHHQIIQ", data, offset)
        offset += 32 + kinds * 136 + count * 16
        if offset > len(data):
            break
        ends.append(offset)
    return ends


class Following:
    """`tremor watch DIR --json --interval 0.2 --until-finished` in the
    background, the files kept looking alive by a toucher."""

    def __init__(self, tremor, directory):
        self.directory = directory
        self.stop = threading.Event()
        self.lines = []
        self.process = subprocess.Popen([tremor, "watch", directory, "--json", "--interval", "0.2",
                                         "--until-finished"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.threads = [threading.Thread(target=self._touch), threading.Thread(target=self._read)]
        for thread in self.threads:
            thread.start()

    def _touch(self):
        while not self.stop.is_set():
            for path in glob.glob(os.path.join(self.directory, "*.spill")):
                try:
                    os.utime(path)
                except FileNotFoundError:
                    pass
            time.sleep(0.1)

    def _read(self):
        for line in self.process.stdout:
            if line.strip():
                self.lines.append(json.loads(line))

    def after(self, changed):
        """The second line stamped after `changed` (the first may have read before it)."""
        deadline = time.time() + 60
        while time.time() < deadline:
            later = [line for line in self.lines if line["time_unix"] > changed]
            if len(later) >= 2:
                return later[1]
            time.sleep(0.05)
        return {}

    def end(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.stop.set()
        for thread in self.threads:
            thread.join()


def case_follow(tremor, source):
    directory = copy_run(source, "follow")
    paths = sorted(glob.glob(os.path.join(directory, "*.spill")))
    full = {path: open(path, "rb").read() for path in paths}
    ends = {path: block_ends(path) for path in paths}
    for path in paths:  # the first half of each file's blocks
        os.truncate(path, ends[path][len(ends[path]) // 2])
    following = Following(tremor, directory)

    def same_as_once(step):
        line = following.after(time.time())
        fresh = watch(tremor, directory, "--once", "--json")
        once = json_lines(fresh.stdout)
        if check(line and once, f"follow {step}: no refresh after the change, or --once failed: {fresh.stderr}"):
            for key in ("segments", "lost_percent", "lost_percent_ci", "class", "run_time_s"):
                check(line.get(key) == once[0].get(key),
                      f"follow {step}: watch {key} {line.get(key)} != --once {once[0].get(key)}")
        return line.get("segments")

    half = same_as_once("first half")
    for path in paths:  # half of the next block: torn until the rest comes
        at = os.path.getsize(path)
        next_end = next(end for end in ends[path] if end > at)
        with open(path, "ab") as grown:
            grown.write(full[path][at:(at + next_end) // 2])
    torn = same_as_once("torn block appended")
    for path in paths:
        with open(path, "ab") as grown:
            grown.write(full[path][os.path.getsize(path):])
    whole = same_as_once("the rest appended")
    victim = paths[-1]
    os.truncate(victim, ends[victim][len(ends[victim]) // 4])
    cut = same_as_once("truncated below what was read")
    # Another file under the name (rename): the whole file, one byte flipped
    # in an early block, so a fresh read stops there; a watch that went on
    # from where it had read the old file would count more.
    damaged = bytearray(full[victim])
    damaged[ends[victim][len(ends[victim]) // 8] + 40] ^= 0x10
    replacement = os.path.join(directory, "replacement")
    with open(replacement, "wb") as other:
        other.write(damaged)
    os.replace(replacement, victim)
    replaced = same_as_once("replaced")
    following.end()
    check(half and torn == half and whole > half and cut < whole and replaced < cut,
          f"follow: segments {half}, {torn}, {whole}, {cut}, {replaced}: not as the files changed")
    print(f"follow: segments {half} (half), {torn} (torn block), {whole} (all), {cut} (truncated), "
          f"{replaced} (replaced)")


def main():
    parser = argparse.ArgumentParser()
    add_launch_arguments(parser)
    parser.add_argument("--tremor", required=True)
    opts = parser.parse_args()
    program = launched_program(opts)
    root = tempfile.mkdtemp(prefix="tremor-watch-input-")
    source = os.path.join(root, "run")
    os.mkdir(source)
    env = dict(os.environ, LD_PRELOAD=opts.preload, TREMOR_OUTPUT_DIR=source, TREMOR_SPILL_INTERVAL="0")
    run_preloaded(mpi_command(opts.launcher, opts.np, program + ["-n", "200", "-u", "300", "-k", "0", "-q",
                                                                 "-F", "kill:120"]), env, 120)
    if not check(len(glob.glob(os.path.join(source, "*.spill"))) == opts.np, "the killed run left no spill files"):
        return 1
    stem = stem_in(source)
    out = os.path.join(root, "recovered")
    os.mkdir(out)

    # recover
    result = watch(opts.tremor, source, "--once", "--json")
    check(result.returncode == 0, f"recover: exit {result.returncode}: {result.stderr}")
    lines = json_lines(result.stdout)
    if check(len(lines) == 1, f"recover: {len(lines)} JSON lines"):
        same_figures(lines[0], recover_figures(opts.tremor, source, stem, out), "recover")

    # per_node: each rank's file in a directory of its own, both named
    nodes = [tempfile.mkdtemp(prefix="watch-node-", dir=root) for _ in range(opts.np)]
    for path in glob.glob(os.path.join(source, "*.spill")):
        rank = int(path.rsplit(".r", 1)[1].split(".")[0])
        shutil.copy2(path, nodes[rank])
    result = watch(opts.tremor, *nodes, "--once", "--json")
    check(result.returncode == 0, f"per_node: exit {result.returncode}: {result.stderr}")
    if result.returncode == 0:
        same_figures(json_lines(result.stdout)[0], recover_figures(opts.tremor, source, stem, out), "per_node")

    # torn
    torn = copy_run(source, "torn")
    victim = sorted(glob.glob(os.path.join(torn, "*.spill")))[-1]
    start, size = last_block_start(victim)
    os.truncate(victim, start + size // 2)
    expected = min(complete_segments(p) for p in glob.glob(os.path.join(torn, "*.spill")))
    result = watch(opts.tremor, torn, "--once", "--json")
    check(result.returncode == 0, f"torn: exit {result.returncode}: {result.stderr}")
    if result.returncode == 0:
        line = json_lines(result.stdout)[0]
        check(line.get("segments") == expected, f"torn: {line.get('segments')} segments, expected {expected}")
        same_figures(line, recover_figures(opts.tremor, torn, stem, out), "torn")

    # missing
    for how in ("removed", "header cut"):
        missing = copy_run(source, "missing")
        victim = sorted(glob.glob(os.path.join(missing, "*.spill")))[-1]
        if how == "removed":
            os.remove(victim)
        else:
            os.truncate(victim, 20)
        result = watch(opts.tremor, missing, "--once", "--json")
        not_crashed(result, f"missing ({how})")
        check(result.returncode == 2, f"missing ({how}): exit {result.returncode}, expected 2")
        lines = json_lines(result.stdout)
        check(lines and "problem" in lines[0], f"missing ({how}): no problem reported: {result.stdout[:300]}")

    # two_jobs
    two = copy_run(source, "two")
    other = stem[:-1] + str(int(stem[-1]) + 1)
    for path in glob.glob(os.path.join(two, "*.spill")):
        copy = path.replace(stem, other)
        shutil.copy(path, copy)
        with open(copy, "ab") as handle:  # newer, and its tail torn: other figures than the first job's
            handle.write(b"\0" * 7)
    result = watch(opts.tremor, two, "--once", "--json")
    check(result.returncode == 0 and json_lines(result.stdout)[0].get("stem") == other,
          f"two_jobs: did not follow the newest stem {other}: {result.stdout[:200]} {result.stderr}")
    check("2 runs" in result.stderr, f"two_jobs: the choice was not said: {result.stderr}")
    result = watch(opts.tremor, os.path.join(two, stem), "--once", "--json")
    check(result.returncode == 0 and json_lines(result.stdout)[0].get("stem") == stem,
          f"two_jobs: the named stem was not followed: {result.stdout[:200]} {result.stderr}")

    # vanish
    vanish = copy_run(source, "vanish")
    stop = threading.Event()

    def flicker():
        paths = sorted(glob.glob(os.path.join(vanish, "*.spill")))
        while not stop.is_set():
            path = random.choice(paths)
            os.rename(path, path + ".away")
            time.sleep(random.uniform(0, 0.005))
            os.rename(path + ".away", path)
            time.sleep(random.uniform(0, 0.02))

    thread = threading.Thread(target=flicker)
    thread.start()
    outcomes = {}
    for _ in range(40):
        result = watch(opts.tremor, vanish, "--once", "--json")
        not_crashed(result, "vanish")
        outcomes[result.returncode] = outcomes.get(result.returncode, 0) + 1
        if result.returncode == 0:
            check(len(json_lines(result.stdout)) == 1, "vanish: exit 0 without one JSON line")
    stop.set()
    thread.join()
    print("vanish: exit statuses", outcomes)

    # garbage
    garbage = tempfile.mkdtemp(prefix="watch-garbage-", dir=root)
    with open(os.path.join(garbage, "x-1-2-0.r0.spill"), "wb") as handle:
        handle.write(b"TREMSPIL" + bytes(random.getrandbits(8) for _ in range(5000)))
    result = watch(opts.tremor, garbage, "--once", "--json")
    not_crashed(result, "garbage")
    check(result.returncode == 2, f"garbage: exit {result.returncode}, expected 2")

    case_follow(opts.tremor, source)
    case_prom(opts.tremor, source)
    if not failures:
        shutil.rmtree(root, ignore_errors=True)
    print("FAILED" if failures else "PASSED", f"({len(failures)} failure(s))")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
