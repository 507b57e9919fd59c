"""The tremor package of `cmake --install`: in <prefix>/lib/python3/dist-packages,
importable with nothing else set, running the installed bin/tremor (not this
build's, not one on PATH).

usage: check_install.py RUNS_DIR --build-dir DIR --prefix DIR --python PYTHON

Known-wrong implementations it fails: a package not installed (import fails),
or an installed _location.py that names the build tree's tremor or a path
that does not resolve from the install folder.
"""
import argparse
import os
import shutil
import subprocess

from python_testing import check, finish, run_files

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--build-dir", required=True)
parser.add_argument("--prefix", required=True)
parser.add_argument("--python", required=True)
options = parser.parse_args()
shutil.rmtree(options.prefix, ignore_errors=True)
done = subprocess.run(["cmake", "--install", options.build_dir, "--prefix", options.prefix],
                      capture_output=True, text=True, timeout=300)
check(done.returncode == 0, f"cmake --install: {done.stderr[-1500:]}")
package_dir = os.path.join(options.prefix, "lib", "python3", "dist-packages")
check(os.path.isfile(os.path.join(package_dir, "tremor", "__init__.py")), f"tremor/ in {package_dir}")
probe = ("import sys, tremor, tremor.tool\n"
         "run = tremor.read(sys.argv[1])\n"
         "print(tremor.tool.find_tremor())\n"
         "print(run.metadata['lost_percent'])\n")
run_file = run_files(options.directory)[0]
clean_env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": package_dir, "PYTHONDONTWRITEBYTECODE": "1"}
done = subprocess.run([options.python, "-c", probe, run_file], env=clean_env, capture_output=True, text=True,
                      timeout=120, cwd="/")
check(done.returncode == 0, f"import tremor from the install: {done.stderr[-1500:]}")
lines = done.stdout.split()
installed_tool = os.path.join(options.prefix, "bin", "tremor")
check(bool(lines) and os.path.realpath(lines[0]) == os.path.realpath(installed_tool),
      f"the installed package runs {installed_tool}: {lines[:1]}")
finish("check_install")
