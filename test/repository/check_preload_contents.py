#!/usr/bin/env python3
"""The preloaded library holds what runs at MPI_Finalize and no more.

usage: check_preload_contents.py LIBTREMOR.so

Its symbols (nm) must include the finalize report (report_run and the text and
JSON formatters) and exclude `tremor compare` and its HTML page, which are
CLI-only (tremor_compare in estimators/analysis/CMakeLists.txt). The linker
copies from a static library only the objects something references, so this
fails a profiler whose finalize code reaches compare (e.g. a formatter in
report_formatters() that renders the compare page) or that links
tremor_compare whole; it checks the outcome, not the CMake lists.
"""
import subprocess
import sys

REQUIRED = ("tremor::analysis::report_run", "tremor::analysis::render_text_report", "tremor::analysis::report_json")
FORBIDDEN = ("tremor::analysis::compare_runs", "tremor::analysis::render_compare_html",
             "tremor::analysis::render_html_view",
             "tremor::analysis::compare_formatters", "tremor::analysis::compare_json")

symbols = subprocess.run(["nm", "-C", "--defined-only", sys.argv[1]], capture_output=True, text=True,
                         check=True).stdout
missing = [name for name in REQUIRED if name not in symbols]
present = [name for name in FORBIDDEN if name in symbols]
for name in missing:
    print(f"FAIL: {sys.argv[1]} lacks {name} (what runs at MPI_Finalize)")
for name in present:
    print(f"FAIL: {sys.argv[1]} carries {name} (CLI-only)")
if missing or present:
    sys.exit(1)
print(f"ok: {sys.argv[1]} carries the finalize report and no compare or HTML code")
