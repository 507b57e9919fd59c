#!/usr/bin/python3
"""The view's "heatmap" block (the fleet page's node x day map of lost time,
issue 52), drawn by the one HTML renderer as an inline SVG.

    check_html_heatmap.py drawing TREMOR_PLOT
    check_html_heatmap.py screenshot TREMOR_PLOT DIR [--chromium PATH]   (exit 77: capability no-chromium)

drawing: fails a renderer that passes a label, the unit or the caption through
unescaped (the planted markup appears raw), one that draws a null cell (a
coloured cell in the place of no value), one whose colours do not follow the
values (the largest cell not the scale's top colour, a zero cell not its
bottom colour), one without the unit on its scale or without every row and
column label, one whose cells become unreadable (under 8 x 12 pixels) at 200
nodes x 90 days, one that draws values that do not match the labels
instead of refusing the view with status 2, and one that refuses a table
whose "highlighted" lists row indices (the fleet page's ranking).
screenshot: the page of tremor-plot --view in headless Chromium; fails when
the largest cells are not drawn in the scale's top colour (an SVG that
Chromium does not render, cells of no size) or when the blank row is coloured.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from recorded_checks import check, failures  # noqa: E402
from tremor_plot.html_page import HEAT_STOPS, heat_colour, render_view  # noqa: E402
from tremor_testing import skip_for  # noqa: E402

MARKER = '<meta name="generator" content="tremor fleet">'
DAYS = ["2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04", "2026-12-05", "2026-12-06", "2026-12-07"]
NODES = [f"n{i}" for i in range(1, 9)]
LARGEST = 40.0


def small_view():
    """8 nodes x 7 days: n3 loses the most every day, n6 is never used (null), n1 loses nothing."""
    values = []
    for node in NODES:
        if node == "n3":
            values.append([LARGEST] * len(DAYS))
        elif node == "n6":
            values.append([None] * len(DAYS))
        elif node == "n1":
            values.append([0.0] * len(DAYS))
        else:
            values.append([round(1.5 + 0.5 * d, 2) for d in range(len(DAYS))])
    heatmap = {"rows": NODES, "columns": DAYS, "values": values, "unit": "s", "caption": "lost time per node and day"}
    return {"title": "Tremor fleet", "marker": MARKER, "blocks": [{"heading": "Lost time"}, {"heatmap": heatmap}]}


def draw(tremor_plot, view_text):
    return subprocess.run([tremor_plot, "--view", "-"], input=view_text, capture_output=True, text=True, timeout=120)


def cells(page):
    """(fill, tooltip) of every drawn cell."""
    return re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="[\d.]+" height="[\d.]+" fill="(#[0-9a-f]{6})"[^>]*>'
                      r"<title>([^<]*)</title></rect>", page)


def check_drawing(tremor_plot):
    view = small_view()
    page = render_view(view)
    drawn = cells(page)
    check(len(drawn) == 7 * len(DAYS), f"one cell per value, none for null: {len(drawn)} cells for 49 values")
    check(not any(tip.startswith("n6,") for _, tip in drawn), "the null row n6 has no cell")
    fills = {tip: fill for fill, tip in drawn}
    check(fills.get(f"n3, {DAYS[0]}: 40 s") == heat_colour(1.0) == "#%02x%02x%02x" % HEAT_STOPS[-1],
          f"the largest value has the scale's top colour: {fills.get(f'n3, {DAYS[0]}: 40 s')}")
    check(fills.get(f"n1, {DAYS[0]}: 0 s") == "#%02x%02x%02x" % HEAT_STOPS[0],
          "a zero cell has the scale's bottom colour")
    middle = fills.get(f"n2, {DAYS[0]}: 1.5 s")
    check(middle not in (None, heat_colour(0.0), heat_colour(1.0)), f"a value between has a colour between: {middle}")
    check(">40 s</text>" in page and ">0 s</text>" in page and "colour: s" in page, "the scale shows its ends and unit")
    for label in NODES + DAYS:
        check(f">{label}</text>" in page, f"label {label} is drawn")
    check("<figcaption>lost time per node and day</figcaption>" in page, "the caption is shown")

    hostile = {"title": "t", "marker": MARKER, "blocks": [{"heatmap": {
        "rows": ["<script>alert(1)</script>", "a&b"], "columns": ['"day"<i>'], "values": [[1.0], [None]],
        "unit": "<u>s</u>", "caption": "<b>caption</b>"}}]}
    page = render_view(hostile)
    for raw in ("<script>", "<i>", "<u>", "<b>", "a&b"):
        check(raw not in page, f"{raw!r} is escaped")
    for shown in ("&lt;script&gt;alert(1)&lt;/script&gt;", "a&amp;b", "&lt;b&gt;caption&lt;/b&gt;",
                  "&lt;u&gt;s&lt;/u&gt;"):
        check(shown in page, f"{shown!r} is shown")

    rows = [f"node{r:03d}" for r in range(200)]
    days = [f"2026-09-{d:02d}" if d <= 30 else f"day {d}" for d in range(1, 91)]
    big = {"rows": rows, "columns": days, "unit": "s",
           "values": [[float(r + d) for d in range(90)] for r in range(200)]}
    page = render_view({"title": "t", "marker": MARKER, "blocks": [{"heatmap": big}]})
    size_pattern = r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="([\d.]+)"'
    sizes = {(float(w), float(h)) for w, h in re.findall(size_pattern, page)}
    check(len(cells(page)) == 200 * 90, "200 x 90 cells are drawn")
    check(sizes and all(w >= 8 and h >= 12 for w, h in sizes), f"cells at 200 x 90 are at least 8 x 12 pixels: {sizes}")
    svg_width = int(re.search(r'<svg [^>]*width="(\d+)"', page).group(1))
    check(svg_width <= 1100, f"200 x 90 fits the page's width: {svg_width} px")
    check(all(f">{label}</text>" in page for label in rows + days), "every row and column label at 200 x 90")

    # The fleet page's ranking table marks whole rows by their index.
    ranked = {"title": "t", "marker": MARKER, "blocks": [{"table": {
        "header": ["node", "score"], "rows": [["n3", "0.29"], ["n6", "-0.06"]], "highlighted": [0], "text_columns": 1}}]}
    page = render_view(ranked)
    check('<td class="text differs">n3</td><td class="differs">0.29</td>' in page and
          '<td class="text">n6</td><td>-0.06</td>' in page, "a table's rows marked by index are marked whole")

    result = draw(tremor_plot, json.dumps(view))
    check(result.returncode == 0 and MARKER in result.stdout and "<svg" in result.stdout,
          f"tremor-plot --view draws the heat map (status {result.returncode}: {result.stderr.strip()})")
    broken = json.loads(json.dumps(view))
    broken["blocks"][1]["heatmap"]["values"][0].append(1.0)
    result = draw(tremor_plot, json.dumps(broken))
    check(result.returncode == 2 and result.stdout == "" and "heatmap" in result.stderr,
          "values that do not match the labels are refused with status 2 "
          f"({result.returncode}: {result.stderr.strip()})")


def check_screenshot(tremor_plot, directory, chromium):
    chromium = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        skip_for("no-chromium", "neither --chromium nor chromium nor chromium-browser on PATH")
    import matplotlib.image  # noqa: E402  (only this mode needs it)
    import numpy  # noqa: E402

    os.makedirs(directory, exist_ok=True)
    page_path, shot = os.path.join(directory, "heatmap.html"), os.path.join(directory, "heatmap.png")
    result = draw(tremor_plot, json.dumps(small_view()))
    if not check(result.returncode == 0, f"tremor-plot --view: {result.stderr.strip()}"):
        return
    with open(page_path, "w") as handle:
        handle.write(result.stdout)
    if os.path.exists(shot):
        os.remove(shot)
    with tempfile.TemporaryDirectory() as profile:
        chrome = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                 "--no-first-run",
                                 f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1200,900",
                                 "file://" + os.path.abspath(page_path)], capture_output=True, text=True, timeout=90)
    if not check(os.path.exists(shot), f"Chromium wrote a screenshot: {chrome.stderr[-1500:]}"):
        return
    pixels = (matplotlib.image.imread(shot)[:, :, :3] * 255).round().astype(int)
    svg = result.stdout[result.stdout.index("<svg"):]
    first = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="([\d.]+)"', svg)
    width, height = float(first.group(2)), float(first.group(3))
    top = numpy.all(numpy.abs(pixels - numpy.array(HEAT_STOPS[-1])) <= 4, axis=2)
    # n3's 7 cells, less their white borders; the legend's top end adds a few.
    check(top.sum() >= 0.8 * 7 * width * height, f"n3's cells in the top colour: {top.sum()} pixels, "
                                                  f"7 cells of {width:g} x {height:g}")
    rows = numpy.nonzero(top.any(axis=1))[0]
    if check(len(rows) >= height * 0.8, "the top-colour cells form a row"):
        # n6 (null) is three rows below n3: blank, white across the cells' columns.
        columns = numpy.nonzero(top[rows[len(rows) // 2]])[0]
        blank_y = int(rows[len(rows) // 2] + 3 * height)
        strip = pixels[blank_y, columns.min():columns.max()]
        check(numpy.all(strip >= 250), f"the null row is blank (least channel {strip.min()})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["drawing", "screenshot"])
    parser.add_argument("tremor_plot")
    parser.add_argument("directory", nargs="?", default="")
    parser.add_argument("--chromium", default="")
    opts = parser.parse_args()
    if opts.mode == "drawing":
        check_drawing(opts.tremor_plot)
    else:
        check_screenshot(opts.tremor_plot, opts.directory, opts.chromium)
    print(f"{opts.mode}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
