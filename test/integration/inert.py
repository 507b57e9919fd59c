#!/usr/bin/env python3
"""Non-MPI processes with Tremor preloaded stay inert: same output, same exit
status, nothing on stderr, no file created (a shell, Python, fork + exec).

usage: inert.py LIB
"""
import os
import subprocess
import sys
import tempfile

COMMANDS = [
    ["/bin/sh", "-c", "echo hello; ls / > /dev/null; exit 3"],
    [sys.executable, "-c", "import os; open(os.devnull, 'w').write('x'); print('py')"],
    ["/bin/sh", "-c", "( /bin/echo child ) & wait; cat /etc/hostname > /dev/null"],
]


def main():
    library = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="tremor-inert-") as out:
        for command in COMMANDS:
            plain = subprocess.run(command, capture_output=True, text=True, cwd=out)
            env = dict(os.environ, LD_PRELOAD=library, TREMOR_OUTPUT_DIR=out, TREMOR_LOG_LEVEL="debug")
            loaded = subprocess.run(command, capture_output=True, text=True, env=env, cwd=out)
            same = (plain.stdout, plain.returncode) == (loaded.stdout, loaded.returncode)
            if not same or loaded.stderr or os.listdir(out):
                failures += 1
                print(f"FAILED {command}: stdout/rc same={same}, stderr={loaded.stderr!r}, files={os.listdir(out)}")
    print(f"{len(COMMANDS) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
