"""Tremor's one HTML renderer: the page shell, its style and its tables, for the
run page (page.py) and for `tremor compare --html`, which hands this module a
view of its tables as JSON (`tremor-plot --view FILE`, render_view below)."""
from __future__ import annotations

import base64
import math
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
figure.heatmap{margin:6px 0;overflow-x:auto}figure.heatmap figcaption{color:#555;font-size:13px}
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

# The heat map's colour scale, low to high (sequential, readable in grey):
# pale yellow, orange, dark red. A cell without a value is left blank.
HEAT_STOPS = [(255, 247, 188), (253, 141, 60), (189, 0, 38)]
HEAT_WIDTH = 1000  # pixels for labels and cells: the page's width less its margins


def heat_colour(fraction: float) -> str:
    """The scale's colour at `fraction` in [0, 1], linear between the stops."""
    position = min(max(fraction, 0.0), 1.0) * (len(HEAT_STOPS) - 1)
    low = min(int(position), len(HEAT_STOPS) - 2)
    part = position - low
    red, green, blue = (round(a + (b - a) * part) for a, b in zip(HEAT_STOPS[low], HEAT_STOPS[low + 1]))
    return f"#{red:02x}{green:02x}{blue:02x}"


def _heat_number(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def _heat_values(spec: dict) -> list[list[float | None]]:
    """The cells, checked against the labels; null, or a value that is not a finite number, is no value."""
    rows, columns, values = spec["rows"], spec["columns"], spec["values"]
    if not isinstance(rows, list) or not isinstance(columns, list) or not isinstance(values, list):
        raise ValueError("heatmap: rows, columns and values must be lists")
    if len(values) != len(rows) or any(not isinstance(line, list) or len(line) != len(columns) for line in values):
        raise ValueError(f"heatmap: values must be {len(rows)} rows of {len(columns)} cells")
    def number(cell):
        usable = isinstance(cell, (int, float)) and not isinstance(cell, bool) and math.isfinite(cell)
        return float(cell) if usable else None
    return [[number(cell) for cell in line] for line in values]


def _heat_legend(top: int, left: int, largest: float, unit: str) -> list[str]:
    """The colour scale as a bar with its unit: 0 at the left, the largest cell at the right."""
    width, last = 240, len(HEAT_STOPS) - 1
    stops = [f'<stop offset="{i / last:g}" stop-color="{heat_colour(i / last)}"/>' for i in range(last + 1)]
    ticks = [(0.0, "start"), (0.5, "middle"), (1.0, "end")]
    parts = [f'<defs><linearGradient id="heat-scale-{top}-{left}">{"".join(stops)}</linearGradient></defs>',
             f'<rect x="{left}" y="{top}" width="{width}" height="12" fill="url(#heat-scale-{top}-{left})" '
             'stroke="#999"/>']
    for fraction, anchor in ticks:
        label = escape(f"{_heat_number(largest * fraction)} {unit}".strip())
        parts.append(f'<text x="{left + width * fraction:g}" y="{top + 26}" text-anchor="{anchor}" '
                     f'font-size="11">{label}</text>')
    parts.append(f'<text x="{left + width + 12}" y="{top + 11}" font-size="11">colour: {escape(unit or "value")}; '
                 "blank: no value</text>")
    return parts


def heatmap_figure(spec: dict) -> str:
    """An inline SVG heat map: a row per rows[i], a column per columns[j], each
    cell coloured by values[i][j] on a scale from 0 to the largest value (its
    unit on the legend), a blank cell for null; every label escaped, each cell's
    value in its tooltip. Cells shrink to fit HEAT_WIDTH (readable to about 200
    rows and 90 columns); long labels are shortened on the drawing, whole in the tooltips."""
    values = _heat_values(spec)
    rows, columns = [str(r) for r in spec["rows"]], [str(c) for c in spec["columns"]]
    unit, caption = str(spec.get("unit") or ""), str(spec.get("caption") or "")
    shown = [label if len(label) <= 24 else label[:23] + "…" for label in rows]
    label_width = 12 + 7 * max((len(label) for label in shown), default=1)
    cell_width = max(8, min(48, (HEAT_WIDTH - label_width) // max(len(columns), 1)))
    cell_height = 22 if len(rows) <= 30 else 14
    row_font, column_font = (12 if cell_height >= 20 else 10), min(11, cell_width)
    header = 12 + 6 * max((len(c) for c in columns), default=1)
    width = label_width + cell_width * len(columns) + 4
    finite = [cell for line in values for cell in line if cell is not None]
    largest = max(max(finite, default=0.0), 0.0)
    scale = largest if largest > 0 else 1.0
    height = header + cell_height * len(rows) + 48
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="{max(width, 520)}" height="{height}" '
             f'role="img" aria-label="{escape_attribute(caption or "heat map")}">']
    for j, column in enumerate(columns):
        x = label_width + cell_width * j + cell_width / 2 + column_font / 3
        parts.append(f'<text transform="translate({x:g},{header - 4}) rotate(-90)" font-size="{column_font}">'
                     f"{escape(column)}</text>")
    for i, (row, label) in enumerate(zip(rows, shown)):
        y = header + cell_height * i
        parts.append(f'<text x="{label_width - 6}" y="{y + cell_height / 2 + row_font / 3:g}" text-anchor="end" '
                     f'font-size="{row_font}"><title>{escape(row)}</title>{escape(label)}</text>')
        for j, cell in enumerate(values[i]):
            if cell is None:
                continue
            tip = escape(f"{row}, {columns[j]}: {_heat_number(cell)} {unit}".strip())
            parts.append(f'<rect x="{label_width + cell_width * j}" y="{y}" width="{cell_width}" '
                         f'height="{cell_height}" fill="{heat_colour(cell / scale)}" stroke="#fff" '
                         f'stroke-width="0.5"><title>{tip}</title></rect>')
    parts += _heat_legend(header + cell_height * len(rows) + 12, label_width, largest, unit)
    parts.append("</svg>")
    figure = "".join(parts)
    return f'<figure class="heatmap">{figure}<figcaption>{escape(caption)}</figcaption></figure>' if caption \
        else f'<figure class="heatmap">{figure}</figure>'


def _cell_marks(spec: dict) -> list[list[bool]] | None:
    """A view table's marks per cell: "highlighted" holds them per cell, or
    lists the indices of the rows whose every cell is marked (the fleet page's
    nodes above the fleet's baseline)."""
    marks = spec.get("highlighted")
    if marks and all(isinstance(m, int) and not isinstance(m, bool) for m in marks):
        return [[r in set(marks)] * len(row) for r, row in enumerate(spec["rows"])]
    return marks


def render_view(view: dict) -> str:
    """A page from a view: {"title", "marker", "blocks": [...]}, each block one of
    {"heading": text}, {"paragraph": text, "class": css class},
    {"table": {"header", "rows", "highlighted" (per cell, or row indices), "text_columns"}} or
    {"heatmap": {"rows", "columns", "values" (rows x columns, numbers or null), "unit", "caption"}}."""
    body = [f"<h1>{escape(str(view['title']))}</h1>"]
    for block in view.get("blocks", []):
        if "heading" in block:
            body.append(f"<h2>{escape(str(block['heading']))}</h2>")
        elif "paragraph" in block:
            body.append(paragraph(str(block["paragraph"]), str(block.get("class", ""))))
        elif "table" in block:
            spec = block["table"]
            body.append(table(spec["header"], spec["rows"], _cell_marks(spec), int(spec.get("text_columns", 0))))
        elif "heatmap" in block:
            body.append(heatmap_figure(block["heatmap"]))
        else:
            raise ValueError(f"unknown block {sorted(block)}")
    return document(str(view["title"]), str(view["marker"]), body)
