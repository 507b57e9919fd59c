"""How the test drivers start an MPI program with a library preloaded, and
the command line and environment they share.

Normally LD_PRELOAD is in the launcher's environment, so the launcher, its
proxies and any shell on the way have Tremor loaded too (and must stay inert).
In a sanitized build (TREMOR_TEST_PRELOAD_RANKS_ONLY=1, set by
test/CMakeLists.txt) those uninstrumented programs with the sanitizer runtime
preloaded deadlock in their exit handlers (libp11-kit's destructor, loaded
through libhdf5 -> libcurl, waits on a setlocale lock), so there LD_PRELOAD
reaches the ranks only: env(1) sets it between the launcher and the program,
and the ranks, built with the sanitizer, run instrumented Tremor.
"""
import argparse
import os
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from tremor_testing import run_measured  # noqa: E402

RANKS_ONLY = os.environ.get("TREMOR_TEST_PRELOAD_RANKS_ONLY") == "1"


def mpi_command(launcher, np, program):
    """LAUNCHER (one string, split on spaces) -n NP PROGRAM..."""
    return shlex.split(launcher) + ["-n", str(np)] + list(program)


def preloaded(command, env):
    """The (command, env) to run: COMMAND from mpi_command, ENV as the driver built it."""
    preload = env.get("LD_PRELOAD") if env else None
    if not RANKS_ONLY or not preload:
        return command, env
    program_at = command.index("-n") + 2
    env = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
    return command[:program_at] + ["env", "LD_PRELOAD=" + preload] + command[program_at:], env


def run_preloaded(command, env, timeout, **options):
    """Runs COMMAND (from mpi_command) as preloaded() arranges it, capturing its text
    output; the result's args is the command that ran."""
    command, env = preloaded(command, env)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, **options)


def run_preloaded_bounded(command, env, timeout):
    """run_preloaded in a session of its own: (returncode, stdout, stderr,
    seconds), or None with stderr's tail when it outlived `timeout` s; then the
    whole process group is killed, so a hung job leaves no rank behind."""
    command, env = preloaded(command, env)
    started = time.monotonic()
    job = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        out, err = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        return None, job.communicate()[1]
    return (job.returncode, out, err, time.monotonic() - started), None


def run_preloaded_measured(command, env, timeout, **options):
    """run_preloaded, while the kernel's counts of what the machine took from the
    ranks are sampled (tremor_testing.JobLoad); returns (result, load)."""
    program = command[command.index("-n") + 2]
    command, env = preloaded(command, env)
    return run_measured(command, env, timeout, [program], **options)


def environment_without_tremor(*also_removed):
    """This process's environment without any TREMOR_* setting (nor the names in
    also_removed): each run then gets exactly the settings the driver gives it."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TREMOR_") and k not in also_removed}


def add_launch_arguments(parser):
    """--launcher CMD [--np N] --preload LIB [--] PROGRAM ARGS..., read back with launched_program()."""
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--preload", required=True)
    parser.add_argument("program", nargs=argparse.REMAINDER)


def launched_program(opts):
    """PROGRAM ARGS... of add_launch_arguments, without the `--` before them."""
    return opts.program[1:] if opts.program[:1] == ["--"] else opts.program
