"""docs/python.md's worked example runs: lost time per node over three runs,
a table on stdout and a PNG plot.

usage: check_example.py RUNS_DIR --script docs/examples/lost_per_node.py --python PYTHON OUTPUT_DIR

Known-wrong implementations it fails: an example that does not run with this
package (an API renamed under it), or that writes no plot.
"""
import argparse
import os
import shutil
import subprocess

import tremor

from python_testing import check, finish, run_files

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("output")
parser.add_argument("--script", required=True)
parser.add_argument("--python", required=True)
options = parser.parse_args()
shutil.rmtree(options.output, ignore_errors=True)
os.makedirs(options.output)
plot = os.path.join(options.output, "lost_per_node.png")
paths = run_files(options.directory)[:3]
done = subprocess.run([options.python, options.script, plot, *paths], capture_output=True, text=True, timeout=120)
check(done.returncode == 0, f"the example exits 0: {done.stderr[-2000:]}")
print(done.stdout)
with open(plot, "rb") if os.path.exists(plot) else open(os.devnull, "rb") as handle:
    check(handle.read(8) == b"\x89PNG\r\n\x1a\n", f"{plot} is a PNG")
runs = tremor.read_many(paths)
lines = done.stdout.splitlines()
for hostname in runs.nodes["hostname"].unique():
    check(any(hostname in line for line in lines[:2]), f"node {hostname} is a column of the table")
check(sum(1 for line in lines if line.split()[:1] in (["0"], ["1"], ["2"])) == 3, "one table row per run")
finish("check_example")
