"""docs/python.md shows the worked example's exact code: the ```python block
after the line `<!-- example: docs/examples/lost_per_node.py -->` equals the
script that CI runs (python.example).

usage: check_docs_example.py SOURCE_DIR
Known-wrong state it fails: the page edited without the script, or the
other way round (a one-character difference).
"""
import os
import sys

MARKER = "<!-- example: docs/examples/lost_per_node.py -->"
root = sys.argv[1]
with open(os.path.join(root, "docs", "python.md"), encoding="utf-8") as handle:
    page = handle.read().split("\n")
with open(os.path.join(root, "docs", "examples", "lost_per_node.py"), encoding="utf-8") as handle:
    script = handle.read()
if MARKER not in page:
    sys.exit(f"docs/python.md lacks the line {MARKER}")
start = page.index(MARKER) + 1
if start >= len(page) or page[start] != "```python" or "```" not in page[start + 1:]:
    sys.exit(f"docs/python.md: a ```python block must follow {MARKER}")
end = page.index("```", start + 1)
shown = "\n".join(page[start + 1:end]) + "\n"
if shown != script:
    sys.exit("docs/python.md's example differs from docs/examples/lost_per_node.py: copy the script into the page")
print("docs/python.md shows docs/examples/lost_per_node.py exactly")
