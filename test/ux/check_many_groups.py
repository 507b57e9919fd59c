"""The page and `tremor compare` on a run with 200 groups, as a real application
has (NWChem: 251): the groups that lost most come first, the page stays
readable, compare prints a screenful.

usage: check_many_groups.py page DIR --writer WRITE_MANY_GROUPS_RUN --tremor-plot PATH --plot-module SCRIPTS_DIR
       check_many_groups.py compare DIR --writer WRITE_MANY_GROUPS_RUN --tremor PATH

The truth is the writer's: it plants delays in 15 groups whose numbers are in
no particular order (largest total first) and prints them; group g's segments
last 1 ms · (1 + g/100), so the page's and compare's groups are told apart by
their median (intrinsic) duration, never by Tremor's group numbering.
"""
import argparse
import json
import os
import re
import shutil
import sys

import h5py

from ux_common import check, finish, run

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=["page", "compare"])
parser.add_argument("directory")
parser.add_argument("--writer", required=True)
parser.add_argument("--tremor-plot")
parser.add_argument("--plot-module")
parser.add_argument("--tremor")
options = parser.parse_args()

GROUPS = 200
COLOURED = 8     # scripts/tremor_plot/ranking.py COLOURED_GROUPS
HISTOGRAMS = 12  # ranking.py HISTOGRAM_GROUPS
COMPARE_ROWS = 10  # compare.hpp kCompareTextGroups
COLUMNS = 100    # compare.hpp kCompareTextColumns


def synthetic_group(duration_s):
    """The writer's group number of a group whose median (intrinsic) duration is duration_s."""
    return round((duration_s / 1e-3 - 1.0) * 100.0)


def write_run(name, kind):
    path = os.path.join(options.directory, name)
    result = run([options.writer, path, kind])
    check(result.returncode == 0, f"{options.writer} {kind}: {result.stderr[-1500:]}")
    truth = json.loads(result.stdout) if result.returncode == 0 else {"planted": []}
    return path, [item["group"] for item in truth["planted"]]


shutil.rmtree(options.directory, ignore_errors=True)
os.makedirs(options.directory)

if options.mode == "page":
    run_file, planted = write_run("many.h5", "planted")
    check(len(planted) > HISTOGRAMS, f"more planted groups than histogram panels: {planted}")
    page_path = os.path.join(options.directory, "many.html")
    result = run([options.tremor_plot, run_file, "-o", page_path])
    check(result.returncode == 0, f"tremor-plot exit 0: {result.stderr}")
    with open(page_path, encoding="utf-8") as handle:
        page = handle.read()
    with h5py.File(run_file, "r") as handle:
        report = json.loads(handle["analysis/report_json"][()])
    number_of = {group["index"]: synthetic_group(group["median_s"]) for group in report["groups"]}
    check(len(report["groups"]) == GROUPS, f"{GROUPS} usable groups, got {len(report['groups'])}")

    # Where, When, What before the groups; the timeline once.
    headings = re.findall(r"<h2>([^<]*)</h2>", page)
    positions = {name: next((i for i, h in enumerate(headings) if h.startswith(name)), None)
                 for name in ("Where", "When", "What", "Segment timeline", "Groups")}
    check(None not in positions.values(), f"sections on the page: {headings}")
    if None not in positions.values():
        check(positions["Where"] < positions["When"] < positions["What"] < positions["Groups"],
              f"Where, When, What come before Groups: {headings}")
    check(page.count("Segment timeline") == 1, f"'Segment timeline' once on the page, {page.count('Segment timeline')}")

    # The groups table: folded, every group, largest lost time first.
    table = re.search(r"<details class='groups'>.*?<table class='groups'>(.*?)</table>.*?</details>", page, re.S)
    check(table is not None, "the groups table is inside a <details> element")
    if table:
        rows = re.findall(r"<tr><td>(\d+)</td><td>\d+</td>(?:<td>[^<]*</td>){4}<td>([^<]*)</td>", table.group(1))
        check(len(rows) == GROUPS, f"{GROUPS} group rows, got {len(rows)}")
        lost = [float(value) for _, value in rows]
        check(lost == sorted(lost, reverse=True), f"rows by lost time, largest first: {lost[:20]}")
        shown = [number_of.get(int(index)) for index, _ in rows[:len(planted)]]
        check(shown == planted, f"the planted groups first, largest delay first: {shown} != {planted}")

    # Charts from the module itself: the figures' legend and panels.
    sys.path.insert(0, options.plot_module)
    from tremor_plot import charts  # noqa: E402
    from tremor_plot.run_file import load_run  # noqa: E402
    view = load_run(run_file)
    figure = charts.timeline_figure(view)
    axes = figure.axes[0]
    legend = axes.get_legend()
    labels = [text.get_text() for text in legend.get_texts()]
    group_labels = [label for label in labels if "group" in label and label != "no usable group"]
    check(len(group_labels) <= COLOURED + 1, f"at most {COLOURED} groups and one 'other groups' entry: {labels}")
    coloured = [number_of.get(int(label.split()[1])) for label in group_labels if label.startswith("group ")]
    check(coloured == planted[:COLOURED], f"the coloured groups are the {COLOURED} that lost most: {coloured}")
    check(any(label.endswith("other groups") for label in labels), f"one grey entry for the rest: {labels}")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legend_box, axes_box = legend.get_window_extent(renderer), axes.get_window_extent(renderer)
    check(legend_box.x0 >= axes_box.x1 or legend_box.y1 <= axes_box.y0 or legend_box.x1 <= axes_box.x0,
          f"the legend lies outside the plot: legend {legend_box.bounds}, plot {axes_box.bounds}")
    check(axes.get_title() == "", f"the timeline chart repeats no section title: {axes.get_title()!r}")
    histogram = charts.group_distributions_figure(view)
    titles = [a.get_title() for a in histogram.axes if a.get_visible()]
    panels = [number_of.get(int(re.match(r"group (\d+):", title).group(1))) for title in titles]
    check(panels == planted[:HISTOGRAMS], f"histograms of the {HISTOGRAMS} groups that lost most: {panels}")
    finish("many-groups page")

# compare: a clean run against the planted one.
clean, _ = write_run("clean.h5", "clean")
noisy, planted = write_run("noisy.h5", "planted")
result = run([options.tremor, "compare", clean, noisy])
check(result.returncode == 0, f"compare exit 0: {result.stderr[-1500:]}")
text = result.stdout
print(text)
lines = text.splitlines()
long_lines = [line for line in lines if len(line) > COLUMNS]
check(not long_lines, f"no line over {COLUMNS} columns: {long_lines}")
check(f"A: {clean} (reference)" in lines and f"B: {noisy}" in lines, "a legend line maps A and B to the files")
check(any(line.startswith("* marks") for line in lines) or "*" not in text, "the * mark is explained")
check("*-" not in text, "no unexplained '*-'")
start = next((i for i, line in enumerate(lines) if line.startswith("Groups")), None)
check(start is not None, "a Groups table")
if start is not None:
    header = lines[start + 1].split()
    check(header[:1] == ["group"] and "A" in header and "B" in header,
          f"runs named A and B in the header: {lines[start + 1]}")
    rows = []
    for line in lines[start + 2:]:
        if not re.match(r"^\s+\d+\s", line):
            break
        rows.append(line)
    check(len(rows) == COMPARE_ROWS, f"{COMPARE_ROWS} group rows, got {len(rows)}")
    more = [line for line in lines[start + 2 + len(rows):start + 6 + len(rows)] if "more groups" in line]
    check(len(more) == 1 and f"{GROUPS - COMPARE_ROWS} more groups" in more[0] and "--json" in more[0],
          f"a line says how many more groups and where: {more}")
    data = run([options.tremor, "compare", clean, noisy, "--json"])
    report = json.loads(data.stdout) if data.returncode == 0 else {"groups": []}
    check(len(report["groups"]) == GROUPS, f"the JSON keeps all {GROUPS} groups")
    check([r.get("label") for r in report.get("runs", [])] == ["A", "B"], "runs labelled A, B in the JSON")
    number_of = {group["group"]: synthetic_group(group["intrinsic_s"][0]) for group in report["groups"]}
    shown = [number_of.get(int(row.split()[0])) for row in rows]
    check(shown == planted[:COMPARE_ROWS], f"the {COMPARE_ROWS} planted groups that lost most, in order: {shown}")
finish("many-groups compare")
