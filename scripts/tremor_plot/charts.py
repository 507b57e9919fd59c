"""The report's charts, each rendered to PNG bytes with matplotlib (Agg: no display)."""
from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

from .output import PNG_SOFTWARE  # noqa: E402
from .ranking import COLOURED_GROUPS, HISTOGRAM_GROUPS, groups_by_impact  # noqa: E402
from .run_file import RunView  # noqa: E402

INTERFERED_COLOUR = "#d62728"
UNUSED_COLOUR = "#d0d0d0"
OTHER_GROUPS_COLOUR = "#8a8a8a"
# Red is reserved for interference and grey for the groups without a colour of
# their own, so group colours skip tab10's red and grey.
GROUP_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                 "#e377c2", "#17becf", "#bcbd22"]
MAX_STRAGGLER_BARS = 15
EPISODE_COLOUR = "#ffd54f"
EPISODE_OUTLINE = "#00b8f0"  # stands out on the speed map's magma colours
# Compute, MPI, file I/O; used by no other chart, so a screenshot test can find the bars.
COMPONENT_COLOURS = {"compute": "#3b6ea8", "mpi": "#59a14f", "io": "#b07aa1"}
COMPONENT_LABELS = {"compute": "compute", "mpi": "MPI", "io": "file I/O"}


def episodes(run: RunView) -> list[dict]:
    return ((run.report.get("diagnosis") or {}).get("episodes")) or []


def group_colours(run: RunView) -> dict[int, str]:
    """Group number → colour for the groups that lost most; every other group is OTHER_GROUPS_COLOUR."""
    top = groups_by_impact(run.report)[:min(COLOURED_GROUPS, len(GROUP_PALETTE))]
    return {group["index"]: GROUP_PALETTE[rank] for rank, group in enumerate(top)}


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    # The Software text chunk marks the file as tremor-plot's own (output.py).
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": PNG_SOFTWARE})
    plt.close(figure)
    return buffer.getvalue()


def timeline_figure(run: RunView):
    """Every segment's duration in run order; the groups that lost most in colour, the rest grey,
    interfered ones ringed. The legend stands right of the plot, so it never hides a point."""
    figure, axes = plt.subplots(figsize=(11, 3.8))
    for number, episode in enumerate(episodes(run)):
        axes.axvspan(episode["first_segment"] - 0.5, episode["last_segment"] + 0.5, color=EPISODE_COLOUR, alpha=0.45,
                     linewidth=0, label="episode" if number == 0 else None, zorder=0)
    index = np.arange(len(run.duration_s))
    duration_ms = run.duration_s * 1e3
    colours = group_colours(run)
    usable = {group["index"] for group in run.report.get("groups") or []}
    marker_size = 12 if len(index) < 2000 else 3
    # Groups below the minimum size are drawn as "not usable", like segments in no group.
    unusable = ~np.isin(run.segment_group, list(usable))
    others = ~unusable & ~np.isin(run.segment_group, list(colours))
    other_count = len(usable - set(colours))
    for members, colour, label in (
            (unusable, UNUSED_COLOUR, "no usable group"),
            (others, OTHER_GROUPS_COLOUR, f"{other_count} other groups")):
        if members.any():
            axes.scatter(index[members], duration_ms[members], s=marker_size, color=colour, label=label,
                         linewidths=0)
    for group, colour in colours.items():  # the legend lists them largest lost time first
        members = run.segment_group == group
        axes.scatter(index[members], duration_ms[members], s=marker_size, color=colour, label=f"group {group}",
                     linewidths=0)
    interfered = run.segment_class == 2
    if interfered.any():
        axes.scatter(index[interfered], duration_ms[interfered], s=marker_size * 5,
                     facecolors="none", edgecolors=INTERFERED_COLOUR, linewidths=1.2,
                     label="interfered")
    axes.set_xlabel("segment (run order)")
    axes.set_ylabel("duration, max over ranks (ms)")
    if len(duration_ms) and duration_ms.max() > 20 * max(np.median(duration_ms), 1e-9):
        axes.set_yscale("log")  # a few huge outliers would flatten everything else
    axes.grid(alpha=0.3)
    handles, labels = axes.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: (not labels[i].startswith("group "), i))
    legend = axes.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
                         bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, borderaxespad=0.0,
                         title="groups by lost time", title_fontsize=8, alignment="left")
    # Points of a long run are tiny; the legend's must show their colour.
    for handle in getattr(legend, "legend_handles", None) or legend.legendHandles:
        if hasattr(handle, "set_sizes"):
            handle.set_sizes([40 if handle.get_label() == "interfered" else 20])
    return figure


def timeline(run: RunView) -> bytes:
    return _png(timeline_figure(run))


def speed_heatmap(run: RunView) -> bytes | None:
    """Normalised speed (intrinsic / actual) per detail rank and time bin; episodes outlined."""
    if run.speed.size == 0 or np.all(np.isnan(run.speed)):
        return None
    rows = len(run.speed_ranks)
    figure, axes = plt.subplots(figsize=(11, min(7.0, 1.6 + 0.22 * rows)))
    colours = matplotlib.colormaps["magma"].copy()
    colours.set_bad("#e8e8e8")
    image = axes.pcolormesh(run.speed_edges_s, np.arange(rows + 1) - 0.5, np.ma.masked_invalid(run.speed),
                            cmap=colours, vmin=0.5, vmax=1.05, shading="flat")
    for number, episode in enumerate(episodes(run)):
        axes.axvspan(episode["start_s"], episode["end_s"], fill=False, edgecolor=EPISODE_OUTLINE, linewidth=2.5,
                     label="episode" if number == 0 else None)
    step = max(1, rows // 16)
    axes.set_yticks(np.arange(0, rows, step))
    axes.set_yticklabels([str(rank) for rank in run.speed_ranks[::step]], fontsize=7)
    axes.set_ylabel("rank")
    axes.set_xlabel("time since MPI_Init (s)")
    axes.set_title("Normalised speed per rank (intrinsic / actual; 1 = as fast as the group's intrinsic time)")
    figure.colorbar(image, ax=axes, label="speed", fraction=0.03, pad=0.01)
    if episodes(run):
        axes.legend(loc="upper right", fontsize=8)
    return _png(figure)


def components(run: RunView) -> bytes | None:
    """Run time and lost time split into compute, MPI and file I/O, in % of the run time."""
    split = (run.report.get("diagnosis") or {}).get("components")
    if not split:
        return None
    figure, (run_axes, lost_axes) = plt.subplots(1, 2, figsize=(11, 2.0))
    for axes, key, title in ((run_axes, "run", "run time"), (lost_axes, "lost", "lost time")):
        left = 0.0
        for component in ("compute", "mpi", "io"):
            value = split[key].get(component) or 0.0
            axes.barh([title], [value], left=left, color=COMPONENT_COLOURS[component],
                      label=f"{COMPONENT_LABELS[component]} {value:.1f} %")
            left += value
        axes.set_xlim(0, max(left * 1.05, 1e-3 if key == "lost" else 100.0))
        axes.set_xlabel("% of the run time")
        axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=3, frameon=False)
        axes.grid(axis="x", alpha=0.3)
    figure.suptitle("What: components of the run time and of the lost time", fontsize=11)
    return _png(figure)


def group_distributions_figure(run: RunView):
    """Per usable group, those that lost most first: duration histogram with median and the
    median + k·MAD threshold. None without a usable group."""
    shown = groups_by_impact(run.report)[:HISTOGRAM_GROUPS]
    if not shown:
        return None
    colours = group_colours(run)
    mad_factor = (run.report.get("parameters") or {}).get("mad_factor", 4)
    columns = min(3, len(shown))
    rows = math.ceil(len(shown) / columns)
    figure, axes_grid = plt.subplots(rows, columns, figsize=(3.8 * columns, 2.9 * rows), squeeze=False)
    for axes in axes_grid.flat[len(shown):]:
        axes.set_visible(False)
    for axes, group in zip(axes_grid.flat, shown):
        members = run.segment_group == group["index"]
        duration_ms = run.duration_s[members] * 1e3
        interfered = run.segment_class[members] == 2
        bins = np.histogram_bin_edges(duration_ms, bins=min(40, max(5, len(duration_ms) // 3)))
        axes.hist([duration_ms[~interfered], duration_ms[interfered]], bins=bins, stacked=True,
                  color=[colours.get(group["index"], OTHER_GROUPS_COLOUR), INTERFERED_COLOUR],
                  label=["normal", "interfered"])
        axes.axvline(group["median_s"] * 1e3, color="black", linestyle="-", linewidth=1, label="median")
        if group.get("threshold_s") is not None:
            axes.axvline(group["threshold_s"] * 1e3, color=INTERFERED_COLOUR, linestyle="--", linewidth=1.2,
                         label=f"median + {mad_factor:g}·MAD")
        lost = group.get("lost_s") or 0.0
        lost_text = f", lost {lost:.3g} s" if lost >= 1 else f", lost {lost * 1e3:.3g} ms" if lost else ""
        axes.set_title(f"group {group['index']}: {group['segments']} seg., "
                       f"{group['interfered']} interfered{lost_text}", fontsize=8)
        axes.set_xlabel("duration (ms)", fontsize=8)
        axes.tick_params(labelsize=7)
        axes.grid(alpha=0.3)
    axes_grid.flat[0].legend(fontsize=7)
    total = len(run.report.get("groups") or [])
    more = f" (the {len(shown)} of {total} that lost most)" if total > len(shown) else ""
    figure.suptitle(f"Duration distribution per group{more}", fontsize=11)
    figure.tight_layout()
    return figure


def group_distributions(run: RunView) -> bytes | None:
    figure = group_distributions_figure(run)
    return _png(figure) if figure is not None else None


def stragglers(run: RunView) -> bytes | None:
    """Impact attributed to the late rank of each interfered segment, and per node."""
    found = run.report.get("stragglers") or {}
    ranks = (found.get("ranks") or [])[:MAX_STRAGGLER_BARS]
    nodes = (found.get("nodes") or [])[:MAX_STRAGGLER_BARS]
    if not ranks and not nodes:
        return None
    figure, (rank_axes, node_axes) = plt.subplots(1, 2, figsize=(11, 0.35 * max(len(ranks), len(nodes), 3) + 1.2))
    for axes, rows, title, name in (
            (rank_axes, ranks, "late ranks", lambda r: f"rank {r['rank']} ({r['hostname']})"),
            (node_axes, nodes, "late nodes", lambda n: f"node {n['node_id']} ({n['hostname']})")):
        labels = [name(row) for row in rows][::-1]
        impacts = [row["impact_s"] for row in rows][::-1]
        axes.barh(labels, impacts, color=INTERFERED_COLOUR)
        for position, row in enumerate(rows[::-1]):
            axes.annotate(f" {row['segments']} seg.", (impacts[position], position), va="center", fontsize=7)
        axes.set_xlabel("impact attributed (s)")
        axes.set_title(title, fontsize=10)
        axes.tick_params(labelsize=8)
        axes.grid(axis="x", alpha=0.3)
    figure.suptitle("Stragglers: who arrived last at interfered boundaries", fontsize=11)
    figure.tight_layout()
    return _png(figure)


def predictions(run: RunView) -> bytes | None:
    """Predicted run time per method against process count: the prediction interval for one run (thin
    bars) and the confidence interval of the expected run time (thick bars); the headline method in bold."""
    rows = [row for row in (run.report.get("predictions") or []) if row.get("median_s") is not None]
    if not rows:
        return None
    headline = (run.report.get("prediction_headline") or {}).get("method")
    methods = list(dict.fromkeys(row["method"] for row in rows))
    figure, axes = plt.subplots(figsize=(9, 4))
    offsets = np.linspace(-0.06, 0.06, len(methods)) if len(methods) > 1 else [0.0]

    def column(chosen, key):
        return np.array([row.get(key) if row.get(key) is not None else np.nan for row in chosen], dtype=float)

    for offset, method in zip(offsets, methods):
        chosen = sorted((row for row in rows if row["method"] == method), key=lambda row: row["processes"])
        processes = np.array([row["processes"] for row in chosen], dtype=float) * 2 ** offset
        median = column(chosen, "median_s")
        colour = GROUP_PALETTE[methods.index(method) % len(GROUP_PALETTE)]
        for low_key, high_key, width in (("pi_low_s", "pi_high_s", 1.0), ("ci_low_s", "ci_high_s", 4.0)):
            error = np.vstack([np.clip(median - column(chosen, low_key), 0, None),
                               np.clip(column(chosen, high_key) - median, 0, None)])
            axes.errorbar(processes, median, yerr=np.nan_to_num(error), fmt="none", capsize=3 if width < 2 else 0,
                          elinewidth=width, color=colour, alpha=0.8)
        label = f"{method} (headline)" if method == headline else method
        axes.plot(processes, median, marker="o", color=colour, label=label,
                  linewidth=2.5 if method == headline else 1.0)
    world_size = run.report.get("world_size")
    run_time = run.report.get("run_time_s")
    if world_size and run_time is not None:
        axes.scatter([world_size], [run_time], marker="*", s=160, color="black", zorder=5,
                     label=f"measured ({world_size} processes)")
    level = 100 * (run.report.get("parameters") or {}).get("ci", 0.95)
    axes.set_xscale("log", base=2)
    axes.set_xlabel("processes")
    axes.set_ylabel("run time (s)")
    axes.set_title(f"Predicted run time: {level:g} % prediction interval for one run (thin), "
                   f"{level:g} % CI of the expected time (thick)", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return _png(figure)
