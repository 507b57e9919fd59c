"""tremor-run's own options: --help, --version and clear rejections of bad usage."""
import sys

from ux_common import check, finish, run

launcher_script, version = sys.argv[1], sys.argv[2]

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
finish("check_help")
