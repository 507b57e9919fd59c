"""A Run as a Hatchet GraphFrame (LLNL's Hatchet; not a dependency of the package).

The graph: run -> compute / MPI / file I/O -> one node per group (`group N`;
`no usable group` for segments outside the usable groups). The dataframe is
indexed [node, rank], one row per graph node and detail rank, with `time`
(exclusive, s) and `time (inc)`: a group node's time is the rank's compute
(duration less MPI and I/O, at least 0), MPI or I/O time summed over that
group's segments; the inner nodes hold the sum of their children.
"""
from __future__ import annotations

import pandas as pd

COMPONENTS = (("compute", "compute_s"), ("MPI", "mpi_s"), ("file I/O", "io_s"))
NO_GROUP = "no usable group"


def component_times(run) -> pd.DataFrame:
    """Seconds per (component, group label, rank): the leaves of the graph."""
    segments = run.segments
    parts = pd.DataFrame({
        "compute_s": (segments["duration_s"] - segments["mpi_s"] - segments["io_s"]).clip(lower=0.0),
        "mpi_s": segments["mpi_s"],
        "io_s": segments["io_s"],
        "group": [NO_GROUP if pd.isna(group) or group < 0 else f"group {group}" for group in segments["group"]],
    }, index=segments.index)
    summed = parts.groupby(["group", "rank"])[["compute_s", "mpi_s", "io_s"]].sum()
    rows = []
    for component, column in COMPONENTS:
        for (group, rank), seconds in summed[column].items():
            rows.append({"component": component, "group": group, "rank": rank, "time": float(seconds)})
    return pd.DataFrame(rows, columns=["component", "group", "rank", "time"])


def graphframe(run):
    """The run as hatchet.GraphFrame(graph, dataframe, exc_metrics=["time"], inc_metrics=["time (inc)"]);
    ImportError when Hatchet is not installed."""
    import hatchet as ht
    from hatchet.frame import Frame
    from hatchet.graph import Graph
    from hatchet.node import Node

    leaves = component_times(run)
    ranks = sorted(run.segments.index.get_level_values("rank").unique())
    root = Node(Frame({"name": "run", "type": "run"}), None)
    rows = []

    def add_rows(node, name, exclusive, inclusive):
        for rank in ranks:
            rows.append({"node": node, "rank": rank, "name": name, "time": exclusive.get(rank, 0.0),
                         "time (inc)": inclusive.get(rank, 0.0)})

    add_rows(root, "run", {}, leaves.groupby("rank")["time"].sum().to_dict())
    for component, _ in COMPONENTS:
        chosen = leaves[leaves["component"] == component]
        component_node = Node(Frame({"name": component, "type": "component"}), root)
        root.add_child(component_node)
        add_rows(component_node, component, {}, chosen.groupby("rank")["time"].sum().to_dict())
        for group, rows_of_group in chosen.groupby("group", sort=True):
            group_node = Node(Frame({"name": group, "type": "group", "component": component}), component_node)
            component_node.add_child(group_node)
            times = rows_of_group.set_index("rank")["time"].to_dict()
            add_rows(group_node, group, times, times)
    graph = Graph([root])
    graph.enumerate_traverse()
    dataframe = pd.DataFrame(rows).set_index(["node", "rank"]).sort_index()
    return ht.GraphFrame(graph, dataframe, exc_metrics=["time"], inc_metrics=["time (inc)"])
