"""tremor-plot's HTML page from a real run, and its rendering in headless Chromium.

usage: check_html.py make-run DIR --tremor-run PATH --launcher "cmd" --app BSP_DEMO
       check_html.py check-page DIR --tremor-plot PATH [--tremor PATH]   (--tremor: `tremor plot` too)
       check_html.py screenshot DIR [--chromium PATH]   (exit 77: skipped for capability no-chromium)
"""
import argparse
import base64
import glob
import json
import os
import re
import shutil
import sys
import tempfile

import h5py

from ux_common import check, finish, mpi_run, run, single_run_file
from tremor_testing import skip_for  # test/common, on ux_common's path
# Must match scripts/tremor_plot/page.py: colours used nowhere else on the page.
LIGHT_COLOURS = {"low": (0x1a, 0xb0, 0x4c), "medium": (0xf5, 0xa6, 0x00), "high": (0xe6, 0x19, 0x19)}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# scripts/tremor_plot/charts.py COMPONENT_COLOURS["compute"]: the run-time bar of the component chart.
COMPUTE_COLOUR = (0x3b, 0x6e, 0xa8)
CHARTS = ["components.png", "distributions.png", "predictions.png", "speed.png", "stragglers.png", "timeline.png"]

parser = argparse.ArgumentParser()
parser.add_argument("mode", choices=["make-run", "check-page", "screenshot"])
parser.add_argument("directory")
parser.add_argument("--tremor-run")
parser.add_argument("--tremor-plot")
parser.add_argument("--tremor")
parser.add_argument("--launcher")
parser.add_argument("--app")
parser.add_argument("--chromium", default="")
options = parser.parse_args()
page_path = os.path.join(options.directory, "report.html")


def stored_report(run_file):
    with h5py.File(run_file, "r") as handle:
        report = json.loads(handle["analysis/report_json"][()])
        names = [name.decode() for name in handle["configuration/name"][()]]
    return report, names


if options.mode == "make-run":
    # Planted interference on rank 1's collectives: the page then has interfered
    # segments, stragglers and warnings to show.
    shutil.rmtree(options.directory, ignore_errors=True)
    os.makedirs(options.directory)
    result = mpi_run(options.launcher, 2, [
        options.tremor_run, "--output-dir", options.directory, "--report", "none",
        "--inject", "mean=25000,sd=3000,p=0.08,calls=coll,ranks=1,seed=7",
        options.app, "-n", "160", "-u", "1000", "-k", "0", "-q"], {"LD_PRELOAD": None, "TREMOR_LIBDIR": None})
    check(result.returncode == 0, f"demo run exit 0: {result.stderr[-2000:]}")
    run_file = single_run_file(options.directory)
    if run_file:
        report, _ = stored_report(run_file)
        check(report["estimate_possible"], f"the run gives an estimate: {report.get('no_estimate_reason')}")
        check(len(report["interfered_segments"]) > 0, "planted delays show as interfered segments")
    finish("make-run")

if options.mode == "check-page":
    run_file = single_run_file(options.directory)
    if not run_file:
        finish("check-page")
    report, configuration_names = stored_report(run_file)
    png_dir = os.path.join(options.directory, "png")
    result = run([options.tremor_plot, run_file, "-o", page_path, "--png", png_dir])
    check(result.returncode == 0, f"tremor-plot exit 0: {result.stderr}")
    with open(page_path, encoding="utf-8") as page_file:
        page = page_file.read()
    # Self-contained: every src/href is a data URI, nothing can reach the network.
    references = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", page, flags=re.IGNORECASE)
    check(all(reference.startswith("data:") for reference in references), f"only data: URIs: {references[:5]}")
    for forbidden in ("://", "<script", "<link", "@import", "url(", "<iframe"):
        check(forbidden not in page.lower(), f"no {forbidden!r} in the page")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    check(len(images) == len(CHARTS), f"{len(CHARTS)} inline charts, found {len(images)}")
    check(all(base64.b64decode(image)[:8] == PNG_SIGNATURE for image in images), "inline images are PNGs")
    headline = f"{report['interference_percent']:.1f} % of this run was lost to interference — {report['class'].upper()}"
    check(headline in page, f"headline {headline!r} on the page")
    for name in configuration_names:
        check(f">{name}<" in page, f"configuration entry {name} in the table")
    for warning in report["warnings"]:
        check(warning["code"] in page, f"warning {warning['code']} on the page")
    prediction_headline = report.get("prediction_headline")
    if prediction_headline:
        check(f"<b>Predicted run time</b> from <b>{prediction_headline['method']}</b>" in page,
              "the headline prediction's method")
        for row in prediction_headline["predictions"]:
            interval = f"<td>{row['pi_low_s']:.3f} – {row['pi_high_s']:.3f}</td>"
            check(interval in page, f"the prediction interval {interval} for {row['processes']} processes")
    pngs = sorted(os.path.basename(path) for path in glob.glob(os.path.join(png_dir, "*.png")))
    check(pngs == CHARTS, f"--png: {pngs}")
    # The diagnosis: where, when, what, as in the stored JSON.
    diagnosis = report.get("diagnosis")
    check(diagnosis is not None, "the run has a diagnosis (detail ranks and an estimate)")
    if diagnosis:
        for heading in ("Where: ranks and nodes the others waited for", "When: episodes", "What: compute, MPI"):
            check(heading in page, f"section {heading!r} on the page")
        for rank in diagnosis["slow_ranks"]:
            check(f"<td class='text'>rank {rank['rank']}</td>" in page and f"<td class='text'>{rank['kind']}</td>" in page,
                  f"slow rank {rank['rank']} ({rank['kind']}) in the table")
        for episode in diagnosis["episodes"]:
            row = f"<tr><td>{episode['start_s']:.3f}</td><td>{episode['end_s']:.3f}</td>"
            check(row in page, f"episode row {row} on the page")
        for key, label in (("run", "run time"), ("lost", "lost time")):
            cells = "".join(f"<td>{diagnosis['components'][key][c]:.1f}</td>" for c in ("compute", "mpi", "io"))
            check(f"<th class='text'>{label}</th>{cells}" in page, f"the {label} split {cells} on the page")
    if options.tremor:
        # `tremor plot` is the same program: the same page, byte for byte.
        via_tremor = os.path.join(options.directory, "report-via-tremor.html")
        result = run([options.tremor, "plot", run_file, "-o", via_tremor])
        check(result.returncode == 0 and os.path.exists(via_tremor), f"tremor plot exit 0: {result.stderr}")
        if os.path.exists(via_tremor):
            with open(via_tremor, encoding="utf-8") as page_file:
                check(page_file.read() == page, "tremor plot writes the page tremor-plot writes")
    # Bad input: one clear line, exit 2, no page.
    with tempfile.TemporaryDirectory() as scratch:
        not_hdf5 = os.path.join(scratch, "notes.h5")
        with open(not_hdf5, "w") as handle:
            handle.write("not a run file\n")
        result = run([options.tremor_plot, not_hdf5, "-o", os.path.join(scratch, "x.html")])
        check(result.returncode == 2 and result.stderr.count("\n") == 1 and "is not an HDF5 file" in result.stderr,
              f"non-HDF5 input: exit 2 with one line, got {result.returncode} {result.stderr!r}")
        check(not os.path.exists(os.path.join(scratch, "x.html")), "no page written for bad input")
    finish("check-page")

# screenshot
chromium = options.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    skip_for("no-chromium", "neither --chromium nor chromium nor chromium-browser on PATH")
if not os.path.exists(page_path):
    print(f"CHECK FAILED: no page {page_path} (check-page failed?)")
    sys.exit(1)
import matplotlib.image  # noqa: E402  (only this mode needs it)
import numpy  # noqa: E402

run_file = single_run_file(options.directory)
report, _ = stored_report(run_file)
shot = os.path.join(options.directory, "screenshot.png")
if os.path.exists(shot):
    os.remove(shot)
with tempfile.TemporaryDirectory() as profile:
    result = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                  f"--screenshot={shot}", "--window-size=1200,6000", "file://" + os.path.abspath(page_path)],
                 timeout=90)
check(os.path.exists(shot), f"Chromium wrote a screenshot: {result.stderr[-1500:]}")
if os.path.exists(shot):
    pixels = (matplotlib.image.imread(shot)[:, :, :3] * 255).round().astype(numpy.uint8)
    colours = numpy.unique(pixels.reshape(-1, 3), axis=0)
    check(len(colours) > 200, f"the screenshot has content: {len(colours)} distinct colours")
    non_white = numpy.any(pixels < 245, axis=2).mean()
    check(non_white > 0.05, f"more than 5 % non-white pixels, got {non_white:.3f}")
    light = numpy.array(LIGHT_COLOURS[report["class"]], dtype=int)
    light_pixels = numpy.all(numpy.abs(pixels.astype(int) - light) <= 3, axis=2).sum()
    check(light_pixels > 1500, f"the {report['class']} traffic light is drawn ({light_pixels} pixels)")
    compute = numpy.array(COMPUTE_COLOUR, dtype=int)
    compute_pixels = numpy.all(numpy.abs(pixels.astype(int) - compute) <= 3, axis=2).sum()
    check(compute_pixels > 2000, f"the component chart's compute bar is drawn ({compute_pixels} pixels)")
finish("screenshot")
