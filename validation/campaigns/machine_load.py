"""What the machine took from a job while it ran, from the kernel's own counts:
the run-queue delay of every thread of the job's processes
(/proc/<pid>/task/<tid>/schedstat: time runnable but not running) plus the
steal time the hypervisor took from the CPUs (/proc/stat). Never from
Tremor's output: the tests' bands and the campaigns' machine_percent rest on it.

It fails closed: where the count is incomplete (no process of the job was
sampled, one was seen but exited before its count could be read, a kernel
file did not parse) reading the result raises MachineLoadError, never a zero
or an empty value a check could take for a quiet machine.
"""
import os
import subprocess
import threading
import time


class MachineLoadError(RuntimeError):
    """The machine's share of a run could not be measured."""


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def steal_seconds(proc="/proc"):
    """Steal time of all CPUs so far (proc/stat's cpu line, 8th value), seconds."""
    for line in (_read(os.path.join(proc, "stat")) or "").splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            try:
                return int(fields[8]) / os.sysconf("SC_CLK_TCK")
            except (IndexError, ValueError):
                raise MachineLoadError(f"{proc}/stat: no steal time in its cpu line {line!r}") from None
    raise MachineLoadError(f"{proc}/stat: no cpu line")


def _tasks(proc, pid):
    try:
        return os.listdir(os.path.join(proc, str(pid), "task"))
    except OSError:
        return None


def _children(proc, pid):
    found = []
    for tid in _tasks(proc, pid) or []:
        text = _read(os.path.join(proc, str(pid), "task", tid, "children"))
        if text:
            found += [int(child) for child in text.split()]
    return found


class JobLoad:
    """Samples, while a job runs, the run-queue delay of every thread of the
    job's processes named in `programs` (descendants of `root`); a thread's
    delay is cumulative, so its last sample counts (what a thread waits in its
    last sampling interval is lost: at most the interval per thread). The
    figures raise MachineLoadError when the count is incomplete."""

    INTERVAL_S = 0.05
    # For the first half second, ten times as often: a short job (a baseline
    # loop of a few ms between MPI_Init and MPI_Finalize) must be seen at
    # least once, or its count is incomplete and the check fails.
    START_INTERVAL_S = 0.005
    START_S = 0.5

    def __init__(self, root, programs, proc="/proc", start_thread=True):
        self.root = root
        self.proc = proc
        self.names = {os.path.basename(p)[:15] for p in programs}
        self.delay_ns = {}
        self.problems = []
        self.stopped = False
        self.stop_event = threading.Event()
        try:
            self.steal_start = steal_seconds(proc)
        except MachineLoadError as error:  # the job runs all the same: its figures raise
            self.steal_start = None
            self.problems.append(str(error))
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self._sample, daemon=True) if start_thread else None
        if self.thread:
            self.thread.start()

    def sample_once(self):
        pending, seen = [self.root], set()
        while pending:
            pid = pending.pop()
            if pid in seen:
                continue
            seen.add(pid)
            pending += _children(self.proc, pid)
            name = (_read(os.path.join(self.proc, str(pid), "comm")) or "").strip()
            if name not in self.names:
                continue
            tasks = _tasks(self.proc, pid)
            read = 0
            for tid in tasks or []:
                path = os.path.join(self.proc, str(pid), "task", tid, "schedstat")
                text = _read(path)
                if text is None:
                    continue  # the thread exited: its last sample stands
                fields = text.split()
                try:
                    self.delay_ns[(pid, tid)] = int(fields[1])
                except (IndexError, ValueError):
                    self.problems.append(f"{path} does not parse: {text!r}")
                    continue
                read += 1
            if not read and not any(key[0] == pid for key in self.delay_ns):
                self.problems.append(f"process {pid} ({name}) exited before its run-queue delay could be read")

    def _interval(self):
        return self.START_INTERVAL_S if time.monotonic() - self.start < self.START_S else self.INTERVAL_S

    def _sample(self):
        while not self.stop_event.wait(self._interval()):
            try:
                self.sample_once()
            except Exception as error:  # noqa: BLE001  (kept for the reader: the count is incomplete)
                self.problems.append(f"sampling failed: {error!r}")
                return

    def stop(self):
        self.stop_event.set()
        if self.thread:
            self.thread.join()
        self.wall_s = time.monotonic() - self.start
        try:
            if self.steal_start is not None:
                self._steal_s = steal_seconds(self.proc) - self.steal_start
        except MachineLoadError as error:
            self.problems.append(str(error))
        self.stopped = True
        return self

    def error(self):
        """Why the count is incomplete, or None."""
        if not self.stopped:
            return "the job's sampling was not stopped"
        if self.problems:
            return "; ".join(dict.fromkeys(self.problems))
        if not self.delay_ns:
            return (f"no process named {sorted(self.names)} was sampled under process {self.root} "
                    f"(every {self.INTERVAL_S} s): the machine's share of the run is unknown")
        return None

    def _checked(self):
        problem = self.error()
        if problem:
            raise MachineLoadError(problem)

    @property
    def run_queue_s(self):
        self._checked()
        return sum(self.delay_ns.values()) * 1e-9

    @property
    def steal_s(self):
        self._checked()
        return self._steal_s

    @property
    def processes(self):
        self._checked()
        return len({pid for pid, _ in self.delay_ns})

    def seconds(self):
        """What the machine took from the job (run queue of its threads + steal), s."""
        return self.run_queue_s + self.steal_s

    def largest_process_seconds(self):
        """What the machine took from the one process it took most from (run queue of
        its threads + steal), s: the bound for a figure of each rank on its own."""
        self._checked()
        per_process = {}
        for (pid, _), delay in self.delay_ns.items():
            per_process[pid] = per_process.get(pid, 0) + delay
        return max(per_process.values()) * 1e-9 + self._steal_s

    def percent(self, run_time_s=None):
        """The machine's interference in % of run_time_s (default: the job's wall time)."""
        run_time_s = run_time_s or self.wall_s
        if not run_time_s > 0:
            raise MachineLoadError(f"a run time of {run_time_s} s")
        return 100.0 * self.seconds() / run_time_s

    def describe(self, run_time_s=None):
        return (f"the machine added {self.percent(run_time_s):.2f} % of the run (run queue of "
                f"{self.processes} processes {self.run_queue_s * 1e3:.1f} ms, steal {self.steal_s * 1e3:.1f} ms, "
                f"kernel counts)")

    def record(self):
        """The measurement as the campaigns store it (machine_load.txt): its figures,
        or {"error": why} where it is incomplete."""
        problem = self.error()
        if problem:
            return {"error": problem}
        return {"run_queue_s": self.run_queue_s, "steal_s": self.steal_s, "wall_s": self.wall_s,
                "processes": self.processes}


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
