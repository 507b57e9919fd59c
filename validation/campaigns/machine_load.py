"""What the machine took from a job while it ran, from the kernel's own counts:
the run-queue delay of every thread of the job's processes
(/proc/<pid>/task/<tid>/schedstat: time runnable but not running) plus the
steal time the hypervisor took from the CPUs (/proc/stat). Never from
Tremor's output: the tests' and campaigns' busy-machine decisions rest on it.
"""
import os
import subprocess
import threading
import time


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def steal_seconds():
    """Steal time of all CPUs so far (/proc/stat), seconds; 0 where not reported."""
    for line in (_read("/proc/stat") or "").splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu" and len(fields) > 8:
            return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    return 0.0


def _children(pid):
    found = []
    for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        text = _read(f"/proc/{pid}/task/{tid}/children")
        if text:
            found += [int(child) for child in text.split()]
    return found


class JobLoad:
    """Samples, while a job runs, the run-queue delay of every thread of the
    job's processes named in `programs` (descendants of `root`); a thread's
    delay is cumulative, so its last sample counts (what a thread waits in its
    last sampling interval is lost: at most the interval per thread)."""

    INTERVAL_S = 0.05

    def __init__(self, root, programs):
        self.root = root
        self.names = {os.path.basename(p)[:15] for p in programs}
        self.delay_ns = {}
        self.stop_event = threading.Event()
        self.steal_start = steal_seconds()
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample_once(self):
        pending, seen = [self.root], set()
        while pending:
            pid = pending.pop()
            if pid in seen:
                continue
            seen.add(pid)
            pending += _children(pid)
            if (_read(f"/proc/{pid}/comm") or "").strip() not in self.names:
                continue
            for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
                fields = (_read(f"/proc/{pid}/task/{tid}/schedstat") or "").split()
                if len(fields) >= 2:
                    self.delay_ns[(pid, tid)] = int(fields[1])

    def _sample(self):
        while not self.stop_event.wait(self.INTERVAL_S):
            self._sample_once()

    def stop(self):
        self.stop_event.set()
        self.thread.join()
        self.wall_s = time.monotonic() - self.start
        self.steal_s = steal_seconds() - self.steal_start
        self.run_queue_s = sum(self.delay_ns.values()) * 1e-9
        self.processes = len({pid for pid, _ in self.delay_ns})
        return self

    def percent(self, run_time_s=None):
        """The machine's interference (run queue of the job's threads + steal) in %
        of run_time_s (default: the job's wall time)."""
        return 100.0 * (self.run_queue_s + self.steal_s) / (run_time_s or self.wall_s)

    def describe(self, run_time_s=None):
        return (f"the machine added {self.percent(run_time_s):.2f} % of the run (run queue of "
                f"{self.processes} processes {self.run_queue_s * 1e3:.1f} ms, steal {self.steal_s * 1e3:.1f} ms, "
                f"kernel counts)")


def run_measured(command, env, timeout, programs, **options):
    """Runs command (text output captured) while JobLoad samples the processes
    named in programs; returns (CompletedProcess, JobLoad)."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               **options)
    load = JobLoad(process.pid, programs)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        load.stop()
        raise
    load.stop()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), load
