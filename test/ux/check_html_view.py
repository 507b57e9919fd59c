#!/usr/bin/python3
"""tremor-plot --view: the one HTML renderer draws a view (what `tremor compare
--html` hands it) escaped, with the run page's style, and refuses a bad view.

    check_html_view.py TREMOR_PLOT

Fails a renderer that passes a cell's text through unescaped (the markup
planted below appears raw), one that drops the `differs` mark, one whose page
lacks the view's generator tag (compare could then never replace its own page),
a compare page with a style of its own (not the run page's), and one that
draws an unknown block instead of refusing it with status 2, and one that
turns a sentence's quotes into entities."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from recorded_checks import check, failures  # noqa: E402
from tremor_plot.html_page import STYLE  # noqa: E402  the run page's style (page.py uses it)

MARKER = '<meta name="generator" content="tremor compare">'
VIEW = {
    "title": "Tremor comparison",
    "marker": MARKER,
    "blocks": [
        {"paragraph": "Warning: <script>alert(1)</script> & more", "class": "warning"},
        {"paragraph": "B's \"intrinsic\" time is 4.1 % slower", "class": "verdict"},
        {"heading": "Runs <b>x</b>"},
        {"table": {"header": ["run", "governor"], "rows": [["A", "<i>ondemand</i>"], ["B", "performance"]],
                   "highlighted": [[False, False], [False, True]], "text_columns": 2}},
    ],
}


def draw(tremor_plot, view_text):
    return subprocess.run([tremor_plot, "--view", "-"], input=view_text, capture_output=True, text=True, timeout=120)


def main():
    tremor_plot = sys.argv[1]
    result = draw(tremor_plot, json.dumps(VIEW))
    page = result.stdout
    check(result.returncode == 0, f"a view is drawn (status {result.returncode}: {result.stderr.strip()})")
    check(page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>"), "the output is one whole page")
    check(MARKER in page[:4096], "the page carries the view's generator tag near its start")
    check(STYLE in page, "the page has the run page's style (one renderer)")
    for raw in ("<script>", "<b>x</b>", "<i>ondemand</i>", "& more"):
        check(raw not in page, f"{raw!r} is escaped")
    for escaped in ("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more", "Runs &lt;b&gt;x&lt;/b&gt;",
                    "&lt;i&gt;ondemand&lt;/i&gt;"):
        check(escaped in page, f"{escaped!r} is shown")
    check('<td class="text differs">performance</td>' in page, "the differing cell is marked")
    check('<td class="text">&lt;i&gt;ondemand&lt;/i&gt;</td>' in page, "an equal cell is not marked")
    check('<p class="warning">' in page, "a paragraph keeps its class")
    # A verdict is searched for verbatim in the page (test/ux/check_compare.py, users' greps).
    check('B\'s "intrinsic" time is 4.1 % slower' in page, "quotes in text stay as they are")

    bad = dict(VIEW, blocks=[{"chart": "timeline"}])
    result = draw(tremor_plot, json.dumps(bad))
    check(result.returncode == 2 and result.stdout == "", f"an unknown block is refused with status 2 ({result.returncode})")
    result = draw(tremor_plot, "{not json")
    check(result.returncode == 2 and "unusable view" in result.stderr, "a view that is not JSON is refused")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
