"""tremor.hatchet.graphframe: a Hatchet GraphFrame indexed [node, rank], graph
run -> compute / MPI / file I/O -> groups. Skipped (77) for capability
no-hatchet where Hatchet is not importable (Debian has no package of it).

usage: check_hatchet.py RUNS_DIR

Known-wrong implementation it fails: a frame indexed by node alone, a graph
without the component level, or inclusive times that do not add up.
"""
import argparse
import math

import tremor

from python_testing import check, finish, run_files
from tremor_testing import skip_for

parser = argparse.ArgumentParser()
parser.add_argument("directory")
options = parser.parse_args()
try:
    import hatchet  # noqa: F401
except ImportError as error:
    skip_for("no-hatchet", f"import hatchet: {error}")

run = tremor.read(run_files(options.directory)[1])
frame = tremor.hatchet.graphframe(run)
dataframe = frame.dataframe
check(list(dataframe.index.names) == ["node", "rank"], f"index [node, rank]: {dataframe.index.names}")
roots = frame.graph.roots
check(len(roots) == 1 and roots[0].frame["name"] == "run", "one root, run")
components = [child.frame["name"] for child in roots[0].children]
check(components == ["compute", "MPI", "file I/O"], f"components {components}")
leaves = tremor.hatchet.component_times(run)
for rank in run.segments.index.get_level_values("rank").unique():
    inclusive = dataframe.loc[(roots[0], rank), "time (inc)"]
    expected = float(leaves.loc[leaves["rank"] == rank, "time"].sum())
    check(math.isclose(inclusive, expected, rel_tol=1e-9), f"rank {rank}: run inclusive {inclusive} vs {expected}")
    for component in roots[0].children:
        summed = sum(dataframe.loc[(child, rank), "time"] for child in component.children)
        check(math.isclose(dataframe.loc[(component, rank), "time (inc)"], summed, rel_tol=1e-9, abs_tol=1e-12),
              f"rank {rank}: {component.frame['name']} inclusive = its groups")
finish("check_hatchet")
