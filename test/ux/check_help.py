"""Usage of the user-facing commands.

usage: check_help.py tremor-run TREMOR_RUN VERSION
           its own options: --help, --version and clear rejections of bad usage
       check_help.py tremor TREMOR TREMOR_PLOT
           `tremor --help` lists plot; `tremor plot ARGS` is `tremor-plot ARGS` (output, exit code),
           found beside the tremor executable first, then on PATH, with a clear error otherwise
"""
import os
import shutil
import stat
import sys
import tempfile

from ux_common import check, finish, run


def check_tremor_run(launcher_script, version):
    result = run([launcher_script, "--help"])
    check(result.returncode == 0, "--help exits 0")
    for text in ("usage: tremor-run", "--output-dir DIR", "--counters LIST", "--inject SPEC",
                 "--report KIND", "--version", "TREMOR_LIBDIR", "libmpi.so.40"):
        check(text in result.stdout, f"--help mentions {text!r}")

    result = run([launcher_script, "--version"])
    check(result.returncode == 0 and result.stdout.strip() == f"tremor-run (Tremor) {version}",
          f"--version prints {version}: {result.stdout!r}")

    for arguments, complaint in ((["--bogus", "/bin/true"], "unknown option '--bogus'"),
                                 (["--report", "loud", "/bin/true"], "--report must be text, json, both or none"),
                                 (["--inject", "mean=1,colour=red", "/bin/true"], "unknown key 'colour'"),
                                 (["--inject", "mean", "/bin/true"], "'mean' is not key=value"),
                                 (["--output-dir"], "needs a value"),
                                 ([], "no program given")):
        result = run([launcher_script] + arguments)
        check(result.returncode == 2, f"{arguments}: exit 2, got {result.returncode}")
        check(complaint in result.stderr and result.stderr.count("\n") == 1,
              f"{arguments}: one line saying {complaint!r}, got {result.stderr!r}")

    result = run([launcher_script, "/bin/true"])
    check(result.returncode == 3 and "not an MPI program" in result.stderr, f"/bin/true is refused: {result.stderr!r}")
    result = run([launcher_script, launcher_script])
    check(result.returncode == 3 and "not a dynamically linked program" in result.stderr,
          f"a shell script is refused: {result.stderr!r}")
    result = run([launcher_script, "no-such-program-tremor"])
    check(result.returncode == 3 and "is not an executable file" in result.stderr, "a missing program is refused")


def write_fake_plot_program(directory, exit_code):
    """A tremor-plot that records its arguments (NUL-separated) and exits with exit_code."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "tremor-plot")
    with open(path, "w") as handle:
        handle.write(f"#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$0.args\"\nexit {exit_code}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def recorded_arguments(fake):
    if not os.path.exists(fake + ".args"):
        return None
    with open(fake + ".args", encoding="utf-8") as handle:
        return handle.read().split("\0")[:-1]


def check_tremor_plot_command(tremor, plot_script):
    result = run([tremor, "--help"])
    check(result.returncode == 0, "tremor --help exits 0")
    check(any(line.split()[:1] == ["plot"] and "tremor-plot" in line for line in result.stdout.splitlines()),
          f"tremor --help lists plot: {result.stdout!r}")

    result = run([tremor, "plot", "--help"])
    own_help = run([plot_script, "--help"])
    check(result.returncode == 0 and "--png DIR" in result.stdout and "-o OUTPUT" in result.stdout,
          f"tremor plot --help shows the plot options: {result.stdout!r}")
    check(result.stdout == own_help.stdout, "tremor plot --help is tremor-plot --help")

    # Same output and exit code as tremor-plot itself, `--` and odd names included:
    # 1 for a usage error, 2 for a run file that does not exist.
    for arguments, status in (([], 1), (["--bogus"], 1), (["--", "-dash.h5"], 2),
                              (["no such run.h5", "-o", "page.html"], 2), (["fit"], 2)):
        through_tremor = run([tremor, "plot"] + arguments)
        direct = run([plot_script] + arguments)
        check(through_tremor.returncode == direct.returncode == status,
              f"{arguments}: exit {status} both ways, got {through_tremor.returncode} and {direct.returncode}")
        check((through_tremor.stdout, through_tremor.stderr) == (direct.stdout, direct.stderr),
              f"{arguments}: same output both ways: {through_tremor.stderr!r} vs {direct.stderr!r}")

    # Lookup order, with a copy of the executable in a folder of its own.
    arguments = ["run file.h5", "-o", "", "--", "--help", "plot", "\u00fc*"]
    with tempfile.TemporaryDirectory() as scratch:
        tool_dir, path_dir = os.path.join(scratch, "bin"), os.path.join(scratch, "on-path")
        os.makedirs(tool_dir)
        copied_tremor = shutil.copy2(tremor, tool_dir)
        system_path = os.pathsep.join(["/usr/bin", "/bin"])  # no tremor-plot there
        path_fake = write_fake_plot_program(path_dir, 43)
        beside_fake = write_fake_plot_program(tool_dir, 42)
        on_path = {"PATH": os.pathsep.join([path_dir, system_path])}

        result = run([copied_tremor, "plot"] + arguments, on_path)
        check(result.returncode == 42, f"the tremor-plot beside tremor comes first: exit {result.returncode}")
        check(recorded_arguments(beside_fake) == arguments,
              f"arguments passed unchanged: {recorded_arguments(beside_fake)} != {arguments}")
        check(recorded_arguments(path_fake) is None, "the tremor-plot on PATH is not run")

        os.remove(beside_fake)
        result = run([copied_tremor, "plot"] + arguments, on_path)
        check(result.returncode == 43, f"then the tremor-plot on PATH: exit {result.returncode}")
        check(recorded_arguments(path_fake) == arguments,
              f"arguments passed unchanged: {recorded_arguments(path_fake)} != {arguments}")

        result = run([copied_tremor, "plot", "run.h5"], {"PATH": system_path})
        check(result.returncode == 127, f"no tremor-plot anywhere: exit 127, got {result.returncode}")
        check(result.stderr.count("\n") == 1 and "tremor-plot not found" in result.stderr,
              f"no tremor-plot anywhere: one clear line, got {result.stderr!r}")


if sys.argv[1:2] == ["tremor-run"] and len(sys.argv) == 4:
    check_tremor_run(sys.argv[2], sys.argv[3])
elif sys.argv[1:2] == ["tremor"] and len(sys.argv) == 4:
    check_tremor_plot_command(sys.argv[2], sys.argv[3])
else:
    sys.exit(__doc__)
finish("check_help")
