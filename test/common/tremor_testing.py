"""What the Python test drivers share: checks, capability skips, the
machine's measured share of a run, and the tests' own probe of perf.

A test's truth and its skip decisions never come from Tremor's output. What
the machine took from a run is measured from the kernel
(validation/campaigns/machine_load.py, shared with the campaigns): the
run-queue delay of the job's own processes plus steal. Tremor rightly reports
that as interference, so an accuracy check widens its band by all of it; a
miss outside the widened band fails the test. No check is retried and no
timing miss is excused: a test skips only for a listed capability
(capabilities.py).
"""
import ctypes
import os
import platform
import statistics
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "validation", "campaigns"))
from machine_load import MachineLoadError, run_measured  # noqa: E402,F401  (for the drivers)
from capabilities import skip_line  # noqa: E402  (same folder)

SKIPPED = 77  # CTest SKIP_RETURN_CODE of every test that may skip


class CheckFailed(Exception):
    """A check failed: the product is wrong (whatever the machine did)."""


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def skip_for(capability, detail):
    """Ends the test as skipped for a listed capability (capabilities.py); an
    unknown name raises KeyError, which fails the test."""
    line = skip_line(capability, detail)
    print(line, flush=True)
    sys.exit(SKIPPED)


# perf_event_open's number per architecture (asm/unistd.h).
PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241, "riscv64": 241, "ppc64le": 319, "ppc64": 319, "s390x": 331,
                   "i686": 336, "i386": 336, "armv7l": 364}


def perf_switch_records_refusal():
    """Why perf_event_open refuses this process context-switch records (the
    event Tremor's CPU-time and on-CPU readers open, with its settings), or None
    when it allows them. The test's own probe: the ranks run as this process's
    user in its namespaces, so they get the same answer."""
    number = PERF_EVENT_OPEN.get(platform.machine())
    if number is None:
        raise CheckFailed(f"no perf_event_open number known for {platform.machine()} (tremor_testing.py)")
    attr = bytearray(112)  # PERF_ATTR_SIZE_VER5
    flags = (1 << 5) | (1 << 6) | (1 << 18) | (1 << 25) | (1 << 26)  # exclude_kernel, _hv, sample_id_all,
    # use_clockid, context_switch
    struct.pack_into("=IIQQQQQ", attr, 0, 1, len(attr), 9, 0, 1 << 2, 0, flags)  # SOFTWARE, DUMMY, SAMPLE_TIME
    struct.pack_into("=i", attr, 92, 1)  # clockid CLOCK_MONOTONIC
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    buffer = (ctypes.c_char * len(attr)).from_buffer(attr)
    fd = libc.syscall(ctypes.c_long(number), buffer, ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1),
                      ctypes.c_ulong(8))  # PERF_FLAG_FD_CLOEXEC
    if fd < 0:
        return "perf_event_open: " + os.strerror(ctypes.get_errno())
    os.close(fd)
    return None


def print_calibration(rows, unit="runs"):
    """--calibrate N of the drivers: the mean and SD of each figure the checks
    recorded (a value or a list per row) over the rows in which the machine
    took less than 1 % of the run (`machine_percent`)."""
    quiet = [r for r in rows if r.get("machine_percent", 100.0) < 1.0]
    print(f"{len(quiet)} of {len(rows)} {unit} with the machine's share below 1 %:")
    for key in sorted({k for r in rows for k in r} - {"machine_percent"}):
        values = [v for r in quiet if key in r for v in (r[key] if isinstance(r[key], list) else [r[key]])]
        if len(values) >= 2:
            print(f"  {key}: mean {statistics.mean(values):+.4f}, sd {statistics.stdev(values):.4f} "
                  f"({len(values)} values)")
