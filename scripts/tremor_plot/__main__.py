"""Command line of tremor-plot: FILE.h5 [-o report.html] [--png DIR]."""
from __future__ import annotations

import argparse
import os
import sys

from . import exit_codes, output
from .run_file import RunFileError, load_run

CHART_NAMES = ("timeline", "distributions", "stragglers", "speed", "components", "predictions")


class Parser(argparse.ArgumentParser):
    """argparse, with the usage error's status of every Tremor command."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(exit_codes.USAGE, f"{self.prog}: error: {message}\n")


def build_charts(run) -> dict:
    from . import charts  # matplotlib only once the input is known to be good
    return {
        "timeline": charts.timeline(run),
        "distributions": charts.group_distributions(run),
        "stragglers": charts.stragglers(run),
        "speed": charts.speed_heatmap(run),
        "components": charts.components(run),
        "predictions": charts.predictions(run),
    }


def planned_outputs(options) -> list[tuple[str, bytes]]:
    """(path, marker) of every file this call will write, checked before any is written."""
    planned = []
    if options.png:
        planned += [(os.path.join(options.png, f"{name}.png"), output.PNG_MARKER) for name in CHART_NAMES]
    if options.output:
        planned.append((options.output, output.HTML_MARKER))
    return planned


def run(options) -> int:
    inputs = [options.run_file]
    default_page = options.output is None and not options.png
    if default_page:
        # Beside the run file and never replaced: only -o names a page to replace.
        options.output = os.path.splitext(options.run_file)[0] + ".html"
        if os.path.lexists(options.output):
            raise output.OutputRefused(f"{options.output} exists; name the output with -o")
    if options.png and os.path.lexists(options.png) and not os.path.isdir(options.png):
        raise output.OutputRefused(f"will not write into {options.png}: it exists and is not a directory")
    for path, marker in planned_outputs(options):
        output.check(path, marker, inputs)
    run_view = load_run(options.run_file)
    rendered = build_charts(run_view)
    if options.png:
        try:
            os.makedirs(options.png, exist_ok=True)
        except OSError as error:
            raise output.OutputRefused(f"cannot create {options.png}: {error.strerror}") from None
        for name, png in rendered.items():
            if png:
                path = os.path.join(options.png, f"{name}.png")
                output.write(path, png, output.PNG_MARKER, inputs)
                print(f"tremor-plot: wrote {path}", file=sys.stderr)
    if options.output:
        from .page import render_page
        output.write(options.output, render_page(run_view, rendered).encode("utf-8"), output.HTML_MARKER, inputs)
        print(f"tremor-plot: wrote {options.output}", file=sys.stderr)
    return exit_codes.OK


def render_view_file(path: str) -> int:
    """`tremor-plot --view FILE|-`: the page of a view (html_page.render_view) on stdout.
    `tremor compare --html` calls it, so both pages come from one renderer."""
    import json

    from .html_page import render_view
    try:
        if path == "-":
            view = json.load(sys.stdin)
        else:
            with open(path, encoding="utf-8") as handle:
                view = json.load(handle)
        page = render_view(view)
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"tremor-plot: unusable view {path}: {error}", file=sys.stderr)
        return exit_codes.BAD_INPUT
    sys.stdout.write(page)
    sys.stdout.flush()
    return exit_codes.OK


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--view"]:
        if len(arguments) != 2:
            print("tremor-plot: usage: tremor-plot --view FILE|-", file=sys.stderr)
            return exit_codes.USAGE
        return render_view_file(arguments[1])
    parser = Parser(
        prog="tremor-plot",
        description="Render a Tremor run file (.h5) as a self-contained HTML page and/or PNG charts. "
                    "The run file is read with the tremor package, which analyses it with `tremor analyze`.",
        epilog="tremor-plot --view FILE|- draws a page view (JSON; what `tremor compare --html` passes) on "
               "stdout. Exit status: 0 done, 1 usage error, 2 unreadable or invalid run file, 4 output refused or not "
               "written, 70 internal error, 127 no tremor tool to check the run file.")
    parser.add_argument("run_file", help="the .h5 file written at MPI_Finalize")
    parser.add_argument("-o", "--output", help="HTML file to write (replaces only a page tremor-plot wrote); "
                        "default without --png: FILE.html beside the run file, never replaced")
    parser.add_argument("--png", metavar="DIR", help="also write each chart as DIR/<chart>.png")
    options = parser.parse_args(argv)
    try:
        return run(options)
    except RunFileError as error:
        print(f"tremor-plot: {error}", file=sys.stderr)
        return error.exit_code
    except output.OutputRefused as error:
        print(f"tremor-plot: {error}", file=sys.stderr)
        return exit_codes.OUTPUT
    except Exception as error:  # noqa: BLE001  one line, never a traceback
        print(f"tremor-plot: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return exit_codes.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
