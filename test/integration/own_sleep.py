"""The run-file check of integration.helper_thread_not_interference (run_app.py
--check own_sleep): test/apps/helper_thread.c makes each rank's main thread
wait HELPER_MS for a helper thread's computation in segment 1, outside any MPI
call, on an otherwise undisturbed run.

By construction that wait is the application's own: the segment's off-CPU
time leaves it out, /ranks/own_sleep_s holds it, and the estimate stays far
below the share of the run the wait took, each beyond what the machine was
measured to take. A recorder that counts the wait as time taken from the
thread (the whole off-CPU time) fails all three. Where the program's own probe says
perf refuses context-switch records, Tremor cannot tell the wait apart and
must say so by NaN; that is checked, then the test skips for the capability."""
import json
import math

import numpy as np

from tremor_testing import skip_for  # test/common, on run_app.py's path


def check_own_sleep(f, args, fail):
    helper_s = float(args["helper_ms"]) * 1e-3
    run_time_s = float(f.attrs["run_time_s"])
    own = f["ranks/own_sleep_s"][()]
    probe = [line for line in args["stdout"].splitlines() if line.startswith("perf_switch_records ")]
    if not probe:
        fail("the program did not say whether perf allows context-switch records")
    if not probe[0].endswith(" yes"):
        # Tremor cannot tell the wait apart without the records: it must say so by NaN.
        if not np.all(np.isnan(own)):
            fail(f"{probe[0]}, yet /ranks/own_sleep_s is {own.tolist()}")
        print("own blocking not measured (NaN), as it should")
        skip_for("no-perf-switch-records", f"the program's probe: {probe[0]}")
    print(f"own blocking per rank {own.tolist()} s; the helper computed {helper_s} s per rank")
    if not np.all(own >= 0.8 * helper_s) or not np.all(own <= run_time_s):
        fail(f"/ranks/own_sleep_s {own.tolist()} should be at least 80 % of the {helper_s} s wait")
    off_cpu = f["bins/off_cpu_time/value"][:][f["detail/off_cpu_time"][:]]
    waited = off_cpu[:, 1]
    # A helper the machine held back makes its rank wait longer: that part is interference.
    machine_s = args["load"].seconds()
    print(f"segment 1 off the CPU per rank: {waited.tolist()} s; the machine took {machine_s:.3f} s from the job")
    if not np.all(waited <= 0.2 * helper_s + machine_s):
        fail(f"segment 1's off-CPU time {waited.tolist()} s still holds the {helper_s} s wait for the helper "
             f"(the machine took {machine_s:.3f} s)")
    report = json.loads(f["analysis/report_json"][()])
    share = 100.0 * helper_s / run_time_s
    lost = report["lost_percent"]
    added = 100.0 * machine_s / run_time_s  # the machine's share: Tremor rightly reads it
    print(f"estimated {lost:.2f} % lost; the wait was {share:.1f} % of the run; the machine added {added:.2f} %")
    if not math.isfinite(lost) or lost > share / 3.0 + added:
        fail(f"{lost:.2f} % lost: the {share:.1f} % wait for the helper counted as interference "
             f"(the machine added {added:.2f} %)")
