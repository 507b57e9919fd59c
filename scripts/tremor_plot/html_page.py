"""Tremor's one HTML renderer: the page shell, its style and its tables, for the
run page (page.py) and for `tremor compare --html`, which hands this module a
view of its tables as JSON (`tremor-plot --view FILE`, render_view below)."""
from __future__ import annotations

import base64
from html import escape as escape_attribute


def escape(text: str) -> str:
    """Text between tags: &, < and > only, so a sentence's quotes stay as they are."""
    return escape_attribute(text, quote=False)

STYLE = """
body{font-family:sans-serif;margin:24px auto;max-width:1150px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.headline{display:flex;align-items:center;gap:20px;padding:14px;border:1px solid #ddd;border-radius:8px}
.light{width:64px;height:64px;border-radius:50%;flex:none;box-shadow:0 0 0 4px #333}
.figure{font-size:26px;font-weight:bold}.sub{color:#555;font-size:14px;margin-top:4px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f2f2f2}td.text,th.text{text-align:left}
td.differs{background:#ffe08a;font-weight:bold}
p.verdict{font-size:17px;font-weight:bold}p.warning{color:#a00;font-weight:bold}
img{max-width:100%;display:block;margin:6px 0}
ul.warnings li{margin:4px 0}.muted{color:#777;font-size:12px}
details.groups>summary{cursor:pointer;font-size:14px;margin:6px 0}
"""


def document(title: str, marker: str, body: list[str]) -> str:
    """A whole page: `marker` is the generator tag by which its writer recognises its own file."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{marker}'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def image_tag(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{escape_attribute(alt)}" src="data:image/png;base64,{data}">'


def paragraph(text: str, css_class: str = "") -> str:
    attribute = f' class="{escape_attribute(css_class)}"' if css_class else ""
    return f"<p{attribute}>{escape(text)}</p>"


def table(header: list[str], rows: list[list[str]], highlighted: list[list[bool]] | None = None,
          text_columns: int = 0) -> str:
    """Cells are plain text (escaped here). The first `text_columns` columns are
    left-aligned words; a highlighted cell differs from its reference."""
    def cell(tag: str, text, column: int, marked: bool = False) -> str:
        classes = (["text"] if column < text_columns else []) + (["differs"] if marked else [])
        attribute = f' class="{" ".join(classes)}"' if classes else ""
        return f"<{tag}{attribute}>{escape(str(text))}</{tag}>"

    lines = ["<table>", "<tr>" + "".join(cell("th", name, c) for c, name in enumerate(header)) + "</tr>"]
    for r, row in enumerate(rows):
        marks = highlighted[r] if highlighted and r < len(highlighted) else []
        lines.append("<tr>" + "".join(cell("td", text, c, c < len(marks) and bool(marks[c]))
                                      for c, text in enumerate(row)) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)


def render_view(view: dict) -> str:
    """A page from a view: {"title", "marker", "blocks": [...]}, each block one of
    {"heading": text}, {"paragraph": text, "class": css class} or
    {"table": {"header", "rows", "highlighted", "text_columns"}}."""
    body = [f"<h1>{escape(str(view['title']))}</h1>"]
    for block in view.get("blocks", []):
        if "heading" in block:
            body.append(f"<h2>{escape(str(block['heading']))}</h2>")
        elif "paragraph" in block:
            body.append(paragraph(str(block["paragraph"]), str(block.get("class", ""))))
        elif "table" in block:
            spec = block["table"]
            body.append(table(spec["header"], spec["rows"], spec.get("highlighted"), int(spec.get("text_columns", 0))))
        else:
            raise ValueError(f"unknown block {sorted(block)}")
    return document(str(view["title"]), str(view["marker"]), body)
