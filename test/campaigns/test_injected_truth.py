#!/usr/bin/env python3
"""The campaigns' truth (validation/campaigns/injected_truth.py) on small runs
written here, injector logs and all, whose critical path is known by
construction:

- a delay in the closing collective of the last rank to arrive costs it in full;
- one on a rank that arrived long before the others costs nothing, and one on a
  rank that arrived a little earlier than the last costs the difference;
- a delay in another call counts in full, on top of the closing one; so does
  any delay of the last segment (it ends at MPI_Finalize);
- segment -1 (Tremor's own start-up) counts nothing;
- logs without the traced arrivals, logs of two runs in one folder, or an
  injected run without its logs give no truth rather than a wrong one;
- the machine's own part (run-queue delays the injector logged): its low
  bound counts what the arrivals show (a delayed rank that arrived last costs
  its delay, one that arrived early anyway or behind a planted delay costs
  nothing, inside the collective only what must have come after the last
  arrival), its high bound every rank's delay in full (coupled ranks pass
  each delay on); logs without the columns give no figure.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "validation", "campaigns"))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

import injected_truth  # noqa: E402

HEADER = "rank,sequence,time_s,call,requested_us,spent_us,segment,entered_s,returned_s\n"
QUEUED_HEADER = HEADER.rstrip("\n") + ",queued_entered_s,queued_returned_s\n"


def write_run(folder, segments, rows, world=2, run_time_s=1.0, pid=100):
    """rows: (rank, segment, call, delay s, entered s[, queued when forwarded s,
    queued when returned s]) in call order per rank; a delay of 0 is a traced
    call that was not delayed. The queued columns are written when every row has them."""
    queued = all(len(r) == 7 for r in rows)
    os.makedirs(folder, exist_ok=True)
    with h5py.File(os.path.join(folder, "run.h5"), "w") as h5:
        h5.attrs["run_time_s"] = run_time_s
        h5.attrs["world_size"] = world
        h5["segments/duration_s"] = np.full(segments, 0.1)
    for rank in range(world):
        mine = [r for r in rows if r[0] == rank]
        with open(os.path.join(folder, f"tremor-inject_app_20260101-000000_r{rank}_{pid + rank}-0.csv"), "w") as f:
            f.write(QUEUED_HEADER if queued else HEADER)
            for sequence, (_, segment, call, delay, entered, *waits) in enumerate(mine):
                extra = f",{waits[0]:.9f},{waits[1]:.9f}" if queued else ""
                f.write(f"{rank},{sequence},{entered:.9f},{call},{delay * 1e6:.3f},{delay * 1e6:.3f},{segment},"
                        f"{entered:.9f},{entered + delay + 1e-4:.9f}{extra}\n")


def critical(folder):
    with h5py.File(os.path.join(folder, "run.h5"), "r") as h5:
        return injected_truth.critical_path(h5)


def expect(name, got, want, failures):
    if abs(got - want) > 1e-9:
        failures.append(f"{name}: {got:.6f} s, expected {want:.6f} s")


def machine(folder):
    with h5py.File(os.path.join(folder, "run.h5"), "r") as h5:
        return injected_truth.machine_path(h5)


def expect_unavailable(name, folder, failures):
    try:
        critical(folder)
        failures.append(f"{name}: a truth was computed")
    except injected_truth.TruthUnavailable as reason:
        print(f"{name}: {reason}")


def main():
    failures = []
    A = "MPI_Allreduce"
    with tempfile.TemporaryDirectory() as tmp:
        # Segment 0: rank 1 sleeps 10 ms in the closing collective, entered together
        # with rank 0: 10 ms. Segment 1: rank 0 arrives 200 ms after rank 1: nothing.
        # Segment 2: rank 0 arrives 4 ms after rank 1: 6 ms. Segment 3 (the last) is clean.
        folder = os.path.join(tmp, "closing")
        write_run(folder, 4, [(0, 0, A, 0.0, 1.0), (1, 0, A, 0.010, 1.0),
                              (0, 1, A, 0.0, 2.2), (1, 1, A, 0.010, 2.0),
                              (0, 2, A, 0.0, 3.004), (1, 2, A, 0.010, 3.0)])
        got, largest = critical(folder)
        expect("closing delays against the other rank's arrival", got, 0.016, failures)
        expect("largest delay per segment", largest, 0.030, failures)
        with h5py.File(os.path.join(folder, "run.h5"), "r") as h5:
            percent = injected_truth.injected_percent(h5)
            listed = injected_truth.delays(h5)
        if abs(percent - 1.6) > 1e-9:
            failures.append(f"percent of the run: {percent}, expected 1.6")
        if listed["rank"].tolist() != [1, 1, 1] or abs(listed["spent_s"].sum() - 0.030) > 1e-9:
            failures.append(f"delays listed: {listed}")

        # A 5 ms delay in a send before the collective counts in full, beside a closing
        # delay absorbed by the wait; start-up delays (segment -1) count nothing.
        folder = os.path.join(tmp, "other_call")
        write_run(folder, 2, [(0, -1, "MPI_Barrier", 0.5, 0.5), (0, 0, A, 0.0, 1.21),
                              (1, 0, "MPI_Send", 0.005, 0.99), (1, 0, A, 0.010, 1.0)])
        got, largest = critical(folder)
        expect("a delay in another call", got, 0.005, failures)
        expect("largest with another call", largest, 0.015, failures)

        # An earlier collective of the closing one's name is not the closing one.
        folder = os.path.join(tmp, "earlier_collective")
        write_run(folder, 2, [(0, 0, A, 0.0, 1.0), (0, 0, A, 0.0, 1.5),
                              (1, 0, A, 0.004, 1.0), (1, 0, "MPI_Send", 0.001, 1.2), (1, 0, A, 0.0, 1.5)])
        got, _ = critical(folder)
        expect("an earlier call of the closing name", got, 0.005, failures)

        # Three ranks: the latest other arrival decides; the last segment counts in full.
        folder = os.path.join(tmp, "three_ranks")
        write_run(folder, 2, [(0, 0, A, 0.0, 1.003), (1, 0, A, 0.0, 1.001), (2, 0, A, 0.010, 1.0),
                              (2, 1, "MPI_Barrier", 0.007, 2.0)], world=3)
        got, _ = critical(folder)
        expect("three ranks and the last segment", got, 0.007 + 0.007, failures)

        # Without the traced arrival of rank 0, no truth.
        folder = os.path.join(tmp, "untraced")
        write_run(folder, 2, [(1, 0, A, 0.010, 1.0)])
        expect_unavailable("untraced collectives", folder, failures)
        # Two runs' logs in one folder.
        folder = os.path.join(tmp, "two_runs")
        write_run(folder, 2, [(0, 0, A, 0.0, 1.0), (1, 0, A, 0.010, 1.0)])
        write_run(folder, 2, [(0, 0, A, 0.0, 1.0), (1, 0, A, 0.010, 1.0)], pid=300)
        expect_unavailable("logs of two runs", folder, failures)
        # An injected run (the profiler's /injection lists delays) without its logs.
        folder = os.path.join(tmp, "no_logs")
        os.makedirs(folder)
        with h5py.File(os.path.join(folder, "run.h5"), "w") as h5:
            h5.attrs["run_time_s"] = 1.0
            h5.attrs["world_size"] = 2
            h5["segments/duration_s"] = np.full(2, 0.1)
            h5["injection/rank"] = np.array([1], dtype=np.int32)
        expect_unavailable("an injected run without logs", folder, failures)
        # The machine's own, (name, segments, rows, low, high):
        # - segment 1, rank 1 lost 3 ms to the run queue and arrived last by
        #   those 3 ms: 3 ms; segment 2, rank 1 lost 3 ms but rank 0 arrived 7 ms
        #   after it anyway: nothing before the collective; inside it, rank 1
        #   queued 9 ms while it waited 7 ms: at least 2 ms after the last
        #   arrival; segment 0 (no start-up collective logged) and the last
        #   count nothing;
        # - a planted 10 ms delay in rank 0's closing collective hides rank 1's 3 ms;
        # - ranks that arrive together though rank 0 lost 2 ms and rank 1 1 ms:
        #   coupled; the arrivals show 1 ms (both lost at least that), at most 3 ms;
        # - segment 0 counted from Tremor's start-up broadcast (segment -1): rank
        #   1 lost 4 ms to the run queue and arrived last by those 4 ms.
        machine_cases = [
            ("segment 0 from the start-up collective", 3,
             [(0, -1, "MPI_Bcast", 0.0, 0.5, 0.0, 0.0), (1, -1, "MPI_Bcast", 0.0, 0.5, 0.1, 0.1),
              (0, 0, A, 0.0, 1.0, 0.0, 0.0), (1, 0, A, 0.0, 1.004, 0.104, 0.104),
              (0, 1, A, 0.0, 2.0, 0.0, 0.0), (1, 1, A, 0.0, 2.0, 0.104, 0.104)],
             0.004, 0.004),
            ("the machine's own", 4,
             [(0, 0, A, 0.0, 1.0, 0.0, 0.0), (1, 0, A, 0.0, 1.0, 0.5, 0.5),
              (0, 1, A, 0.0, 2.000, 0.0, 0.0), (1, 1, A, 0.0, 2.003, 0.503, 0.503),
              (0, 2, A, 0.0, 3.010, 0.0, 0.0), (1, 2, A, 0.0, 3.003, 0.506, 0.515),
              (0, 3, "MPI_Barrier", 0.0, 4.0, 0.1, 0.1), (1, 3, "MPI_Barrier", 0.0, 4.0, 0.6, 0.6)],
             0.005, 0.003 + 0.012),
            ("the machine's own behind a planted delay", 3,
             [(0, 0, A, 0.0, 1.0, 0.0, 0.0), (1, 0, A, 0.0, 1.0, 0.0, 0.0),
              (0, 1, A, 0.010, 2.000, 0.0, 0.0), (1, 1, A, 0.0, 2.003, 0.003, 0.003)],
             0.0, 0.003),
            ("coupled ranks", 3,
             [(0, 0, A, 0.0, 1.0, 0.0, 0.0), (1, 0, A, 0.0, 1.0, 0.0, 0.0),
              (0, 1, A, 0.0, 2.0, 0.002, 0.002), (1, 1, A, 0.0, 2.0, 0.001, 0.001)],
             0.001, 0.003),
        ]
        for number, (name, segments, rows, want_low, want_high) in enumerate(machine_cases):
            folder = os.path.join(tmp, f"machine_{number}")
            write_run(folder, segments, rows)
            low, high = machine(folder)
            expect(f"{name}, low bound", low, want_low, failures)
            expect(f"{name}, high bound", high, want_high, failures)
        # Logs without the run-queue columns give no figure.
        folder = os.path.join(tmp, "machine_unlogged")
        write_run(folder, 3, [(0, 0, A, 0.0, 1.0), (1, 0, A, 0.0, 1.0), (0, 1, A, 0.0, 2.0), (1, 1, A, 0.0, 2.003)])
        if machine(folder) is not None:
            failures.append("logs without run-queue columns gave a machine figure")
    for failure in failures:
        print("FAIL", failure)
    print("injected truth:", "ok" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
