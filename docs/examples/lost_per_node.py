"""Lost time per node over several runs, as a table and a plot (docs/python.md).

usage: python3 lost_per_node.py PLOT.png RUN.h5 RUN.h5 RUN.h5
"""
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the plot to a file
import matplotlib.pyplot as plt  # noqa: E402
import tremor  # noqa: E402

plot_path, paths = sys.argv[1], sys.argv[2:]
runs = tremor.read_many(paths)

# One row per run (profile); per node, the seconds charged to its ranks (the
# others waited for their interference) and the lost time of the interfered
# segments its ranks ended last; then the run's own lost time.
nodes = runs.nodes.reset_index()
per_node = nodes.pivot_table(index="profile", columns="hostname", values=["lost_s", "late_impact_s"])
per_node.columns = [f"{host} {'charged' if value == 'lost_s' else 'last'} s" for value, host in per_node.columns]
table = per_node.join(runs.metadata[["executable", "lost_s", "lost_percent", "class"]])
print(table.to_string(float_format="{:.4f}".format))

axes = per_node.plot.bar(figsize=(8, 4), rot=0)
axes.plot(range(len(runs)), runs.metadata["lost_s"], "k_", markersize=30, label="run lost time")
axes.set_xlabel("run (profile)")
axes.set_ylabel("lost time (s)")
axes.set_title("Lost time per node and run")
axes.legend()
axes.figure.savefig(plot_path, dpi=100, bbox_inches="tight")
plt.close(axes.figure)
print(f"wrote {plot_path}")
