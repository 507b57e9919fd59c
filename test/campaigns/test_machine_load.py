#!/usr/bin/python3
"""validation/campaigns/machine_load.py and campaign_common.read_machine_load
fail closed: on a fake /proc, a normal sample gives the exact share, and no
sample, a process that exited unread, a file that does not parse and a
missing or incomplete record raise MachineLoadError, never a number a check
could take for a quiet machine. Last, one real job (a sleep) is measured on
this kernel. No MPI."""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
import campaign_common  # noqa: E402
import machine_load  # noqa: E402
from machine_load import JobLoad, MachineLoadError  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
failures = []


def expect(condition, message):
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        failures.append(message)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def fake_proc(root, steal_ticks, processes):
    """processes: {pid: (comm, children, {tid: schedstat text or None (no task dir)})}."""
    write(os.path.join(root, "stat"), f"cpu  10 0 5 100 0 0 0 {steal_ticks} 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\n")
    for pid, (comm, children, threads) in processes.items():
        write(os.path.join(root, str(pid), "comm"), comm + "\n")
        if threads is None:
            continue
        for tid, schedstat in threads.items():
            task = os.path.join(root, str(pid), "task", str(tid))
            write(os.path.join(task, "children"), " ".join(str(c) for c in children) if tid == pid else "")
            if schedstat is not None:
                write(os.path.join(task, "schedstat"), schedstat)


def raises(what, action):
    try:
        value = action()
    except MachineLoadError as error:
        expect(True, f"{what}: raises ({error})")
        return
    expect(False, f"{what}: raises, got {value!r}")


def measured(root, processes, steal_after=3, names=("app",)):
    fake_proc(root, 0, processes)
    load = JobLoad(100, [f"/opt/bin/{n}" for n in names], proc=root, start_thread=False)
    load.sample_once()
    write(os.path.join(root, "stat"), f"cpu  10 0 5 100 0 0 0 {steal_after} 0 0\n")
    return load.stop()


def stored_and_read(folder, load, run_time_s):
    with open(os.path.join(folder, campaign_common.MACHINE_LOAD_FILE), "w") as handle:
        json.dump(load.record(), handle)
    return campaign_common.read_machine_load(folder, run_time_s)


def main():
    launcher = ("mpiexec", [200, 300], {100: ""})
    with tempfile.TemporaryDirectory() as scratch:
        # A normal sample: 3 + 2 ms queued over two threads of one rank, 1 ms on
        # another, 3 ticks of steal, a 1 s run.
        root = os.path.join(scratch, "normal")
        load = measured(root, {100: launcher, 200: ("app", [], {200: "9 3000000 4\n", 201: "1 2000000 1\n"}),
                               300: ("app", [], {300: "5 1000000 2\n"})})
        expected = 100.0 * (0.006 + 3 / TICK)
        expect(abs(load.percent(1.0) - expected) < 1e-9,
               f"normal sample: {load.percent(1.0):.4f} % == {expected:.4f} %")
        expect(load.processes == 2, f"normal sample: 2 processes, got {load.processes}")
        largest = 0.005 + 3 / TICK
        expect(abs(load.largest_process_seconds() - largest) < 1e-12,
               f"normal sample: the process the machine took most from lost {load.largest_process_seconds():.4f} s")
        got = stored_and_read(scratch, load, 1.0)
        expect(abs(got - expected) < 1e-9, f"normal sample stored and read back: {got:.4f} %")
        # A process sampled once and gone later: its last sample stands.
        for tid in (200, 201):
            os.remove(os.path.join(root, "200", "task", str(tid), "schedstat"))
        load.stopped = False
        load.sample_once()
        load.stop()
        expect(load.error() is None and load.processes == 2, "a rank that exited after a sample keeps its count")

        load = measured(os.path.join(scratch, "none"), {100: launcher, 200: ("other", [], {200: "1 5 1\n"}),
                                                         300: ("other", [], {300: "1 5 1\n"})})
        raises("no process of the job's names sampled: percent", lambda: load.percent(1.0))
        raises("no process sampled: stored and read", lambda: stored_and_read(scratch, load, 1.0))

        load = measured(os.path.join(scratch, "dead"), {100: launcher, 200: ("app", [], {200: "1 1000 1\n"}),
                                                         300: ("app", [], None)})
        raises("a rank that exited before its count was read: percent", lambda: load.percent(1.0))
        raises("a rank that exited unread: stored and read", lambda: stored_and_read(scratch, load, 1.0))

        load = measured(os.path.join(scratch, "parse"), {100: launcher,
                                                          200: ("app", [], {200: "1 n/a 1\n", 201: "1 9 1\n"}),
                                                          300: ("app", [], {300: "5 1000000 2\n"})})
        raises("a schedstat that does not parse: percent", lambda: load.percent(1.0))
        raises("a schedstat that does not parse: stored and read", lambda: stored_and_read(scratch, load, 1.0))
        write(os.path.join(scratch, "nosteal", "stat"), "cpu  10 0 5 100\n")
        raises("a /proc/stat without steal", lambda: machine_load.steal_seconds(os.path.join(scratch, "nosteal")))
        load = JobLoad(100, ["app"], proc=os.path.join(scratch, "nosteal"), start_thread=False).stop()
        raises("a job measured where /proc/stat has no steal: percent", lambda: load.percent(1.0))

        # The stored record itself.
        record = os.path.join(scratch, campaign_common.MACHINE_LOAD_FILE)
        os.remove(record)
        raises("no machine_load.txt", lambda: campaign_common.read_machine_load(scratch, 1.0))
        for text, what in (("{not json", "a record that does not parse"),
                           ('{"run_queue_s": 0.1, "steal_s": 0.0, "wall_s": 1.0, "processes": 0}', "no process"),
                           ('{"run_queue_s": 0.1, "wall_s": 1.0, "processes": 2}', "no steal figure"),
                           ('{"run_queue_s": "", "steal_s": 0, "wall_s": 1.0, "processes": 2}', "an empty figure"),
                           ('{"run_queue_s": NaN, "steal_s": 0, "wall_s": 1.0, "processes": 2}', "a NaN figure"),
                           ('{"error": "sampling failed"}', "a record of a failed count")):
            write(record, text)
            raises(f"machine_load.txt with {what}", lambda: campaign_common.read_machine_load(scratch, 1.0))
        write(record, '{"run_queue_s": 0.1, "steal_s": 0.0, "wall_s": 1.0, "processes": 2}')
        raises("a run time of 0", lambda: campaign_common.read_machine_load(scratch, 0.0))
        got = campaign_common.read_machine_load(scratch, 0.5)
        expect(abs(got - 20.0) < 1e-9, f"a complete record: 0.1 s of 0.5 s is {got} %")

    # This kernel: a real job is sampled and its share is a finite number.
    result, load = machine_load.run_measured(["sleep", "0.3"], dict(os.environ), 10, ["sleep"])
    try:
        share = load.percent()
        expect(result.returncode == 0 and load.processes == 1 and 0.0 <= share < 1e4,
               f"a real sleep of 0.3 s: {load.describe()}")
    except MachineLoadError as error:
        expect(False, f"this kernel's counts cannot be read: {error}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("machine_load checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
