#!/usr/bin/python3
"""`tremor export --format chrome` (docs/trace.md): a validator of the Chrome
trace-event JSON it writes, and the checks CTest runs on a replayed demo run
(test/data/replays/demo/window-0: two ranks, injector logs beside it).

  check_chrome_trace.py validate TRACE [--run-time S]   validate one trace file
  check_chrome_trace.py CHECK --tremor T --replays DIR --work DIR

Each CHECK fails a known-wrong exporter, named in its docstring.
"""
import argparse
import gzip
import json
import math
import os
import shutil
import subprocess
import sys

PHASES = {"X", "M", "C"}
METADATA = {"process_name": ("name", str), "thread_name": ("name", str),
            "process_sort_index": ("sort_index", int), "thread_sort_index": ("sort_index", int)}
EPSILON_US = 0.0015  # the trace's times have three decimals (ns)
REPLAY = "demo/window-0"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_event(index, event, problems):
    where = f"event {index}"
    if not isinstance(event, dict):
        problems.append(f"{where}: not an object")
        return False
    if event.get("ph") not in PHASES:
        problems.append(f"{where}: ph {event.get('ph')!r} is not one of {sorted(PHASES)}")
        return False
    if not isinstance(event.get("name"), str):
        problems.append(f"{where}: name is not a string")
    for key in ("pid", "tid"):
        if not isinstance(event.get(key), int) or isinstance(event.get(key), bool):
            problems.append(f"{where}: {key} is not an integer")
    phase = event["ph"]
    if phase == "M":
        wanted = METADATA.get(event.get("name"))
        args = event.get("args")
        if wanted is None or not isinstance(args, dict) or not isinstance(args.get(wanted[0]), wanted[1]):
            problems.append(f"{where}: metadata {event.get('name')!r} without args.{wanted[0] if wanted else '?'}")
        return True
    if not is_number(event.get("ts")) or event["ts"] < 0:
        problems.append(f"{where}: ts {event.get('ts')!r} is not a number >= 0 (microseconds)")
    if phase == "X" and (not is_number(event.get("dur")) or event["dur"] < 0):
        problems.append(f"{where}: dur {event.get('dur')!r} is not a number >= 0 (microseconds)")
    if phase == "C":
        args = event.get("args")
        if not isinstance(args, dict) or not args or not all(is_number(v) and v >= 0 for v in args.values()):
            problems.append(f"{where}: a counter needs args of numbers >= 0")
    if "args" in event and not isinstance(event["args"], dict):
        problems.append(f"{where}: args is not an object")
    return True


def _check_nesting(slices, problems):
    """Per thread, slices are disjoint or nested: none starts inside another and ends after it."""
    for (pid, tid), spans in slices.items():
        spans.sort(key=lambda span: (span[0], -span[1]))
        stack = []
        for start, end in spans:
            while stack and stack[-1] <= start + EPSILON_US:
                stack.pop()
            if stack and end > stack[-1] + EPSILON_US:
                problems.append(f"pid {pid} tid {tid}: a slice [{start}, {end}] overlaps the one ending at "
                                f"{stack[-1]} partly")
                break
            stack.append(end)


def validate(trace, run_time_s=None):
    """The problems of a trace (a parsed JSON object); empty when it is valid."""
    problems = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not the JSON object form: no traceEvents list"]
    if trace.get("displayTimeUnit") not in ("ms", "ns"):
        problems.append("displayTimeUnit is not ms or ns")
    other = trace.get("otherData")
    if not isinstance(other, dict) or "tremor_trace" not in other:
        problems.append("otherData lacks tremor_trace")
        other = {}
    if not (other.get("lost_percent") is None or is_number(other.get("lost_percent"))):
        problems.append("otherData.lost_percent is not a number")
    interval = other.get("lost_percent_ci")
    if not (interval is None or (isinstance(interval, list) and len(interval) == 2 and all(map(is_number, interval)))):
        problems.append("otherData.lost_percent_ci is not two numbers")
    if not (other.get("class") is None or other.get("class") in ("low", "medium", "high")):
        problems.append("otherData.class is not low, medium or high")
    named_processes, named_threads, sorted_threads = set(), {}, set()
    slices, used = {}, set()
    for index, event in enumerate(trace["traceEvents"]):
        if not _check_event(index, event, problems):
            continue
        key = (event.get("pid"), event.get("tid"))
        if event["ph"] == "M":
            if event["name"] == "process_name":
                named_processes.add(key[0])
            elif event["name"] == "thread_name":
                named_threads[key] = event["args"]["name"]
            elif event["name"] == "thread_sort_index":
                sorted_threads.add(key)
            continue
        used.add(key if event["ph"] == "X" else (key[0], None))
        if event["ph"] == "X" and is_number(event.get("ts")) and is_number(event.get("dur")):
            slices.setdefault(key, []).append((event["ts"], event["ts"] + event["dur"]))
    for pid, tid in used:
        if pid not in named_processes:
            problems.append(f"pid {pid} has events but no process_name")
        if tid is not None and (pid, tid) not in named_threads:
            problems.append(f"pid {pid} tid {tid} has slices but no thread_name")
    for key, name in named_threads.items():
        if name.startswith("rank ") and key not in sorted_threads:
            problems.append(f"thread {name!r} has no thread_sort_index")
    if "Tremor" not in named_threads.values():
        problems.append("no 'Tremor' track")
    _check_nesting(slices, problems)
    if run_time_s:
        rank_ends = [end for key, spans in slices.items() if named_threads.get(key, "").startswith("rank ")
                     for _, end in spans]
        if not rank_ends or not 0.5 * run_time_s * 1e6 <= max(rank_ends) <= 1.05 * run_time_s * 1e6:
            problems.append(f"the rank slices end at {max(rank_ends, default=0)}, not at the run time "
                            f"{run_time_s} s in microseconds")
    return problems


# ---------------------------------------------------------------- the checks

def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def replay_copy(args, name):
    """A fresh folder under --work with the replay's run file and logs, unzipped; the run file's path."""
    folder = os.path.join(args.work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    source = os.path.join(args.replays, REPLAY)
    run_file = None
    for entry in sorted(os.listdir(source)):
        target = os.path.join(folder, entry[:-3] if entry.endswith(".gz") else entry)
        with gzip.open(os.path.join(source, entry), "rb") as packed, open(target, "wb") as out:
            shutil.copyfileobj(packed, out)
        if target.endswith(".h5"):
            run_file = target
    return run_file


def export(args, run_file, *options, expect=0):
    result = run([args.tremor, "export", run_file, *options])
    if result.returncode != expect:
        fail(f"tremor export {' '.join(options)}: exit {result.returncode}, wanted {expect}\n{result.stderr}")
    return result


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        return json.load(handle)


def report(args, run_file):
    result = run([args.tremor, "analyze", "--json", run_file])
    if result.returncode != 0:
        fail(f"tremor analyze --json: exit {result.returncode}\n{result.stderr}")
    return json.loads(result.stdout)


def rank_slices(trace, rank=None):
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    wanted = (lambda n: n.startswith("rank ")) if rank is None else (lambda n: n == f"rank {rank}")
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and wanted(names.get((e["pid"], e["tid"]), ""))]


def check_format(args):
    """The demo replay's trace is valid (fails an exporter writing seconds or milliseconds, an ns clock, partial
    overlaps, a thread without its name, a ph of its own), and the validator rejects each of those wrongs."""
    run_file = replay_copy(args, "format")
    export(args, run_file)
    trace = load(run_file[:-3] + ".trace.json")
    run_time = report(args, run_file)["run_time_s"]
    problems = validate(trace, run_time)
    if problems:
        fail("the trace is invalid:\n  " + "\n  ".join(problems[:20]))
    rank = rank_slices(trace)
    wrongs = {
        "milliseconds": lambda t: [e.update(ts=e["ts"] / 1000, dur=e["dur"] / 1000) for e in rank_slices(t)],
        "partial overlap": lambda t: rank_slices(t)[1].update(ts=rank_slices(t)[0]["ts"] + rank_slices(t)[0]["dur"] / 2),
        "negative ts": lambda t: rank_slices(t)[0].update(ts=-1.0),
        "string ts": lambda t: rank_slices(t)[0].update(ts=str(rank_slices(t)[0]["ts"])),
        "unknown ph": lambda t: t["traceEvents"].append({"ph": "Q", "name": "x", "pid": 0, "tid": 0, "ts": 0}),
        "no thread name": lambda t: t["traceEvents"].__setitem__(slice(None), [
            e for e in t["traceEvents"] if not (e["ph"] == "M" and e["name"] == "thread_name")]),
        "counter text": lambda t: next(e for e in t["traceEvents"] if e["ph"] == "C")["args"].update({"lost %": "1"}),
    }
    for name, spoil in wrongs.items():
        spoilt = json.loads(json.dumps(trace))
        spoil(spoilt)
        if not validate(spoilt, run_time):
            fail(f"the validator accepts a trace with {name}")
    print(f"OK: {len(trace['traceEvents'])} events valid ({len(rank)} rank slices); the validator rejects "
          f"{len(wrongs)} known wrongs")


def check_counts(args):
    """One slice per segment and detail rank (fails one per segment, or none for segments outside groups)."""
    run_file = replay_copy(args, "counts")
    export(args, run_file)
    trace = load(run_file[:-3] + ".trace.json")
    segments = report(args, run_file)["segments"]
    import h5py  # only this check reads the run file itself
    with h5py.File(run_file, "r") as h5:
        detail = len(h5["detail/ranks"][:])
    got = len(rank_slices(trace))
    if got != segments * detail:
        fail(f"{got} rank slices, wanted {segments} segments x {detail} detail ranks")
    print(f"OK: {got} rank slices = {segments} segments x {detail} detail ranks")


def check_excess(args):
    """The excess summed over the trace is the report's lost seconds (fails an exporter that puts a segment's
    lost time on every rank, or one that leaves out segments outside groups)."""
    run_file = replay_copy(args, "excess")
    export(args, run_file)
    trace = load(run_file[:-3] + ".trace.json")
    answer = report(args, run_file)
    lost_s = answer["run_time_s"] * answer["lost_percent"] / 100.0
    summed = sum(e["args"]["excess_s"] for e in trace["traceEvents"] if e["ph"] == "X" and "excess_s" in e["args"])
    if not lost_s > 0 or abs(summed - lost_s) > 1e-6 + 1e-6 * lost_s:
        fail(f"the trace's excess sums to {summed!r} s, the report lost {lost_s!r} s")
    if abs(trace["otherData"]["lost_percent"] - answer["lost_percent"]) > 1e-9:
        fail("otherData.lost_percent differs from the report's")
    print(f"OK: excess {summed:.9f} s = the report's {lost_s:.9f} s")


def check_damaged(args):
    """A truncated and a garbage run file: a clear error, analyze's exit status, no output (fails an export that
    exits 0 or 70 on them, says no more than a traceback, or leaves a file)."""
    run_file = replay_copy(args, "damaged")
    with open(run_file, "rb") as handle:
        content = handle.read()
    damaged = {"truncated.h5": content[: len(content) * 3 // 5],
               "garbage.h5": content[:8] + bytes((i * 131 + 7) % 256 for i in range(len(content) - 8))}
    for name, data in damaged.items():
        path = os.path.join(os.path.dirname(run_file), name)
        with open(path, "wb") as out:
            out.write(data)
        analyzed = run([args.tremor, "analyze", path])
        exported = run([args.tremor, "export", path])
        if analyzed.returncode == 0 or exported.returncode != analyzed.returncode:
            fail(f"{name}: export exit {exported.returncode}, analyze exit {analyzed.returncode}")
        if "not a readable Tremor run file" not in exported.stderr or len(exported.stderr.splitlines()) > 3:
            fail(f"{name}: unclear error: {exported.stderr!r}")
        if os.path.exists(path[:-3] + ".trace.json"):
            fail(f"{name}: a trace was written")
    print(f"OK: damaged files give exit {analyzed.returncode} as analyze does")


def check_filters(args):
    """--ranks, --from/--to keep what they name (fails an exporter ignoring them, or one writing an empty trace
    for a window after the run); .gz is gzip and parses; an existing file is never replaced unless it is a
    trace."""
    run_file = replay_copy(args, "filters")
    folder = os.path.dirname(run_file)
    full_path = os.path.join(folder, "full.trace.json")
    export(args, run_file, "-o", full_path)
    full = load(full_path)
    export(args, run_file, "--ranks", "1", "-o", os.path.join(folder, "rank1.trace.json"))
    one = load(os.path.join(folder, "rank1.trace.json"))
    if rank_slices(one, 0) or len(rank_slices(one, 1)) != len(rank_slices(full, 1)):
        fail("--ranks 1 does not keep exactly rank 1's slices")
    start, end = 0.2, 0.4
    export(args, run_file, "--from", str(start), "--to", str(end), "-o", os.path.join(folder, "window.trace.json"))
    window = load(os.path.join(folder, "window.trace.json"))
    expected = [e for e in rank_slices(full) if e["ts"] + e["dur"] >= start * 1e6 and e["ts"] <= end * 1e6]
    if rank_slices(window) != expected or not 0 < len(expected) < len(rank_slices(full)):
        fail(f"--from/--to kept {len(rank_slices(window))} slices, wanted {len(expected)} of {len(rank_slices(full))}")
    late = export(args, run_file, "--from", "1000", "-o", os.path.join(folder, "late.trace.json"), expect=1)
    if "after the run's end" not in late.stderr:
        fail(f"--from after the run's end: {late.stderr!r}")
    for problems in (validate(one), validate(window)):
        if problems:
            fail("a filtered trace is invalid: " + "; ".join(problems[:5]))
    packed_path = os.path.join(folder, "full.trace.json.gz")
    export(args, run_file, "-o", packed_path)
    with open(packed_path, "rb") as handle:
        if handle.read(2) != b"\x1f\x8b":
            fail(".gz output is not gzip")
    if load(packed_path) != full:
        fail(".gz output differs from the plain trace")
    export(args, run_file, "-o", packed_path)  # its own output may be replaced
    foreign = os.path.join(folder, "notes.json")
    with open(foreign, "w") as out:
        out.write("{}\n")
    refused = export(args, run_file, "-o", foreign, expect=4)
    if "will not write" not in refused.stderr or open(foreign).read() != "{}\n":
        fail("an existing file that is no trace was touched or refused unclearly")
    print(f"OK: --ranks, --from/--to ({len(expected)} slices), .gz and the overwrite rule")


def check_inject(args):
    """--inject-log adds an 'injected, rank N' track per rank with every delay of the logs at its time (fails an
    exporter that drops delays, merges ranks or misplaces them)."""
    run_file = replay_copy(args, "inject")
    folder = os.path.dirname(run_file)
    export(args, run_file, "--inject-log", folder)
    trace = load(run_file[:-3] + ".trace.json")
    if validate(trace):
        fail("the injected trace is invalid: " + "; ".join(validate(trace)[:5]))
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    total = 0
    for log in sorted(f for f in os.listdir(folder) if f.startswith("tremor-inject_")):
        with open(os.path.join(folder, log)) as handle:
            rows = [line.split(",") for line in handle if line[0].isdigit()]
        delays = sorted(float(r[2]) * 1e6 for r in rows if float(r[4]) > 0 or float(r[5]) > 0)
        rank = int(rows[0][0])
        track = sorted(e["ts"] for e in trace["traceEvents"]
                       if e["ph"] == "X" and names.get((e["pid"], e["tid"])) == f"injected, rank {rank}")
        if len(track) != len(delays) or any(abs(a - b) > 1.0 for a, b in zip(track, delays)):
            fail(f"rank {rank}: {len(track)} injected slices, the log has {len(delays)} delays (or misplaced)")
        total += len(delays)
    if total == 0:
        fail("the replay's logs hold no delay")
    if "injected, rank" in json.dumps(load_plain_export(args, run_file)):
        fail("injected tracks without --inject-log")
    print(f"OK: {total} injected delays on their ranks' tracks")


def load_plain_export(args, run_file):
    result = export(args, run_file, "-o", "-")
    return json.loads(result.stdout)


CHECKS = {"format": check_format, "counts": check_counts, "excess": check_excess, "damaged": check_damaged,
          "filters": check_filters, "inject": check_inject}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=["validate", *CHECKS])
    parser.add_argument("trace", nargs="?")
    parser.add_argument("--run-time", type=float)
    parser.add_argument("--tremor")
    parser.add_argument("--replays")
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.check == "validate":
        problems = validate(load(args.trace), args.run_time)
        for problem in problems[:50]:
            print(problem)
        print(f"{args.trace}: {'INVALID' if problems else 'valid'}")
        return 1 if problems else 0
    CHECKS[args.check](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
