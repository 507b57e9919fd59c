"""Command line of tremor-plot: FILE.h5 [-o report.html] [--png DIR]."""
from __future__ import annotations

import argparse
import os
import sys

from . import charts
from .page import render_page
from .run_file import RunFileError, load_run

EXIT_BAD_FILE = 2
EXIT_OUTPUT = 3


def build_charts(run) -> dict:
    return {
        "timeline": charts.timeline(run),
        "distributions": charts.group_distributions(run),
        "stragglers": charts.stragglers(run),
        "speed": charts.speed_heatmap(run),
        "components": charts.components(run),
        "predictions": charts.predictions(run),
    }


def write_new(path: str, data: bytes, overwrite: bool) -> None:
    # 'x' refuses to replace an existing file unless the user named it with -o.
    with open(path, "wb" if overwrite else "xb") as out:
        out.write(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tremor-plot",
        description="Render a Tremor run file (.h5) as a self-contained HTML page and/or PNG charts.")
    parser.add_argument("run_file", help="the .h5 file written at MPI_Finalize")
    parser.add_argument("-o", "--output", help="HTML file to write (replaced if it exists); "
                        "default without --png: FILE.html beside the run file, never replaced")
    parser.add_argument("--png", metavar="DIR", help="also write each chart as DIR/<chart>.png")
    options = parser.parse_args(argv)

    try:
        run = load_run(options.run_file)
    except RunFileError as error:
        print(f"tremor-plot: {error}", file=sys.stderr)
        return EXIT_BAD_FILE
    rendered = build_charts(run)

    try:
        if options.png:
            os.makedirs(options.png, exist_ok=True)
            for name, png in rendered.items():
                if png:
                    write_new(os.path.join(options.png, f"{name}.png"), png, overwrite=True)
                    print(f"tremor-plot: wrote {os.path.join(options.png, name + '.png')}", file=sys.stderr)
        html_path, overwrite = options.output, True
        if html_path is None and not options.png:
            html_path, overwrite = os.path.splitext(options.run_file)[0] + ".html", False
        if html_path:
            write_new(html_path, render_page(run, rendered).encode("utf-8"), overwrite)
            print(f"tremor-plot: wrote {html_path}", file=sys.stderr)
    except FileExistsError as error:
        print(f"tremor-plot: {error.filename} exists; name the output with -o", file=sys.stderr)
        return EXIT_OUTPUT
    except OSError as error:
        print(f"tremor-plot: cannot write {error.filename}: {error.strerror}", file=sys.stderr)
        return EXIT_OUTPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
