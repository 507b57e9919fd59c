"""Helpers shared by the test/ux checks (run with Debian's python3: h5py)."""
import glob
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from launch import mpi_command  # noqa: E402  (shared with the integration tests)
from tremor_testing import run_measured  # noqa: E402
from recorded_checks import check, failures  # noqa: E402,F401  (the ux checks' one way to record)



def finish(name):
    if failures:
        print(f"{name}: {len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print(f"{name}: all checks passed")
    sys.exit(0)


def environment_with(env_changes):
    """This process's environment with env_changes applied (None removes a name)."""
    env = dict(os.environ)
    for key, value in (env_changes or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run(command, env_changes=None, timeout=120):
    env = environment_with(env_changes)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"$ {shlex.join(command)}  -> {result.returncode}", file=sys.stderr)
    return result


def mpi_run(launcher, ranks, command, env_changes=None, timeout=120):
    return run(mpi_command(launcher, ranks, command), env_changes, timeout)


def mpi_run_measured(launcher, ranks, command, program, env_changes=None, timeout=120):
    """mpi_run, while the kernel's counts of what the machine took from the
    processes named program are sampled; returns (result, JobLoad)."""
    result, load = run_measured(mpi_command(launcher, ranks, command), environment_with(env_changes), timeout,
                                [program])
    print(f"$ {shlex.join(result.args)}  -> {result.returncode}", file=sys.stderr)
    return result, load


def single_run_file(directory):
    files = sorted(glob.glob(os.path.join(directory, "*.h5")))
    check(len(files) == 1, f"exactly one run file in {directory}, found {files}")
    return files[0] if files else None
