"""Assembles the self-contained HTML report: inline CSS, images as base64 data URIs."""
from __future__ import annotations

from html import escape

from .html_page import document, image_tag
from .output import HTML_MARKER
from .ranking import HISTOGRAM_GROUPS, groups_by_impact, impact_key
from .run_file import RunView

# Not used by any chart, so a screenshot test can find the light by its colour.
LIGHTS = {"low": ("#1ab04c", "GREEN"), "medium": ("#f5a600", "AMBER"), "high": ("#e61919", "RED")}


def _number(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _headline(report: dict) -> str:
    if not report.get("estimate_possible"):
        reason = report.get("no_estimate_reason") or "unknown reason"
        return (f'<div class="headline"><div class="light" style="background:#9e9e9e"></div><div>'
                f'<div class="figure">No interference estimate</div>'
                f'<div class="sub">{escape(reason)}</div></div></div>')
    run_class = report.get("class") or "low"
    colour, word = LIGHTS.get(run_class, ("#9e9e9e", run_class.upper()))
    return (f'<div class="headline"><div class="light" style="background:{colour}" title="{word}"></div><div>'
            f'<div class="figure">{report["interference_percent"]:.1f} % of this run was lost to interference'
            f' — {escape(run_class.upper())}</div>'
            f'<div class="sub">{_estimates(report)}</div>'
            f'<div class="sub">traffic light {word}; probability that the run is highly interfered '
            f'{_number(report.get("probability_high"), 2)}; continuous interference (upper bound, reported apart) '
            f'{_number(report.get("continuous_interference_percent"), 1)} %</div></div></div>')


def _estimates(report: dict) -> str:
    """The primary estimate with its interval and intrinsic run time, and the paper's 4·MAD figure."""
    interval = report.get("lost_percent_ci") or [None, None]
    primary = (f'Tremor\'s estimate {_number(report.get("lost_percent"), 1)} % '
               f'(95 % interval {_number(interval[0], 1)}–{_number(interval[1], 1)} %); '
               f'intrinsic run time {_number(report.get("intrinsic_run_time_s"))} s')
    paper = f'paper\'s median + 4·MAD figure {_number(report.get("paper_mad4_percent"), 1)} %'
    if report.get("method") == "mad4":
        return escape(f"headline: {paper}; {primary}")
    return escape(f"{primary}; {paper}")


def _run_facts(run: RunView) -> str:
    report = run.report
    facts = [
        ("command line", run.command_line),
        ("MPI", f"{run.mpi_flavour} — {run.mpi_library_version.strip().splitlines()[0] if run.mpi_library_version.strip() else ''}"),
        ("run time", f"{_number(report.get('run_time_s'))} s"),
        ("processes / nodes", f"{report.get('world_size')} / {report.get('node_count')}"),
        ("segments (usable)", f"{report.get('segments')} ({report.get('usable_segments')})"),
        ("boundary rate", f"{_number(report.get('boundary_rate_hz'), 1)} Hz"),
        ("work counter", f"{report.get('counter_source')} ({report.get('counter_unit')})"),
        ("run file", run.path),
    ]
    if len(run.injection_ranks):
        facts.append(("injected delays (ground truth)",
                      f"{len(run.injection_ranks)} delays, {run.injection_spent_us.sum() / 1e6:.3f} s in total"))
    rows = "".join(f'<tr><th class="text">{escape(name)}</th><td class="text">{escape(str(value))}</td></tr>'
                   for name, value in facts)
    return f"<table>{rows}</table>"


def _groups_table(report: dict) -> str:
    """Every usable group, largest lost time first, folded: a real application has hundreds."""
    groups = groups_by_impact(report)
    if not groups:
        return '<p class="muted">No usable group.</p>'
    key = impact_key(report)
    lost_name = "4·MAD impact" if key == "impact_s" else "lost time"
    header = ("<tr><th>group</th><th>segments</th><th>median ms</th><th>MAD ms</th><th>threshold ms</th>"
              "<th>interfered</th><th>lost s</th><th>4·MAD impact s</th>"
              "<th>tail shape k (PWM / MOM)</th><th class='text'>tail fit</th></tr>")
    rows = []
    for group in groups:
        gev = group.get("gev") or {}
        k_values = " / ".join(_number((gev.get(method) or {}).get("k"), 2) for method in ("pwm", "mom"))
        fit = escape(str(gev.get("chosen", ""))) + (" (PWM and MOM disagree)" if gev.get("disagree") else "")
        ms = [_number(group.get(key_ms) * 1e3 if group.get(key_ms) is not None else None)
              for key_ms in ("median_s", "mad_s", "threshold_s")]
        rows.append(f"<tr><td>{group['index']}</td><td>{group['segments']}</td><td>{ms[0]}</td><td>{ms[1]}</td>"
                    f"<td>{ms[2]}</td><td>{group['interfered']}</td><td>{_number(group.get('lost_s'), 4)}</td>"
                    f"<td>{_number(group.get('impact_s'), 4)}</td><td>{k_values}</td>"
                    f"<td class='text'>{fit}</td></tr>")
    unused = report.get("unused_groups", 0)
    note = f'<p class="muted">{unused} group(s) below the minimum size are not used.</p>' if unused else ""
    explained = ("<p class='muted'>A group is the segments between the same MPI calls doing about the same "
                 "work. Lost s: the group's time beyond its intrinsic time (Tremor's estimate); 4·MAD impact: "
                 "its time beyond median + 4·MAD (the outlier rule of the segment-clustering method); tail "
                 "shape: the fitted extreme-value distribution of its durations.</p>")
    summary = (f"{len(groups)} usable groups, largest {lost_name} first "
               f"(the histograms below show the first {min(HISTOGRAM_GROUPS, len(groups))})")
    return (f"<details class='groups'><summary>{escape(summary)}</summary>{explained}"
            f"<table class='groups'>{header}{''.join(rows)}</table>{note}</details>")


def _predictions_table(report: dict) -> str:
    """The headline (one time per size with its prediction interval), then every method with both intervals."""
    rows = report.get("predictions") or []
    if not rows:
        return ""
    level = 100 * (report.get("parameters") or {}).get("ci", 0.95)
    headline = report.get("prediction_headline") or {}
    lead = ""
    if headline.get("method"):
        sizes = "".join(
            f"<tr><td>{_number(row.get('processes'), 0)}</td><td>{_number(row.get('median_s'))}</td>"
            f"<td>{_number(row.get('pi_low_s'))} – {_number(row.get('pi_high_s'))}</td></tr>"
            for row in headline.get("predictions") or [])
        lead = (f"<p><b>Predicted run time</b> from <b>{escape(headline['method'])}</b>: "
                f"{escape(headline.get('reason', ''))}.</p>"
                f"<table><tr><th>processes</th><th>predicted s</th>"
                f"<th>{level:g} % prediction interval for one run, s</th></tr>{sizes}</table>"
                f"<p class='muted'>All methods below: the median and the {level:g} % confidence interval (CI) of "
                f"the expected run time, and the {level:g} % prediction interval (PI) for one run.</p>")
    header = ("<tr><th class='text'>method</th><th>factor</th><th>processes</th><th>median s</th>"
              "<th>CI low s</th><th>CI high s</th><th>PI low s</th><th>PI high s</th></tr>")
    body = "".join(
        f"<tr><td class='text'>{escape(row['method'])}</td><td>{_number(row.get('factor'), 0)}</td>"
        f"<td>{_number(row.get('processes'), 0)}</td><td>{_number(row.get('median_s'))}</td>"
        f"<td>{_number(row.get('ci_low_s'))}</td><td>{_number(row.get('ci_high_s'))}</td>"
        f"<td>{_number(row.get('pi_low_s'))}</td><td>{_number(row.get('pi_high_s'))}</td></tr>" for row in rows)
    return f"{lead}<table>{header}{body}</table>"


def _warnings(report: dict) -> str:
    """One item per kind of warning; its cases, worst first, folded below it."""
    warnings = report.get("warnings") or []
    if not warnings:
        return '<p class="muted">None.</p>'
    items = []
    for item in warnings:
        cases = item.get("cases") or []
        folded = ""
        if len(cases) > 1:
            listed = "".join(f"<li>{escape(case.get('subject', ''))}: {escape(case.get('detail', ''))}</li>"
                             for case in cases)
            folded = f"<details><summary>{len(cases)} cases</summary><ul>{listed}</ul></details>"
        items.append(f"<li><b>{escape(item.get('code', ''))}</b>: {escape(item.get('message', ''))}{folded}</li>")
    return f'<ul class="warnings">{"".join(items)}</ul>'


def _percent(value, digits: int = 1) -> str:
    return _number(100.0 * value if value is not None else None, digits)


def _diagnosis_tables(report: dict) -> dict[str, str]:
    """Where (slow ranks and nodes), when (episodes) and what (components) as tables."""
    diagnosis = report.get("diagnosis")
    if not diagnosis:
        absent = '<p class="muted">No diagnosis: no estimate, or no per-rank detail in the run file.</p>'
        return {"where": absent, "when": "", "what": ""}
    header = ("<tr><th class='text'>{0}</th><th>node</th><th class='text'>host</th><th>last at boundaries %</th>"
              "<th>others waited, % of run</th><th class='text'>kind</th><th>time ratio</th><th>work ratio</th></tr>")
    rows = "".join(
        f"<tr><td class='text'>rank {row['rank']}</td><td>{row['node']}</td><td class='text'>{escape(row['hostname'])}</td>"
        f"<td>{_percent(row.get('last_share'))}</td><td>{_number(row.get('lost_percent'), 1)}</td>"
        f"<td class='text'>{escape(row['kind'])}</td><td>{_number(row.get('time_ratio'))}</td>"
        f"<td>{_number(row.get('work_ratio'))}</td></tr>" for row in diagnosis.get("slow_ranks") or [])
    rows += "".join(
        f"<tr><td class='text'>node ({row['ranks']} ranks)</td><td>{row['node']}</td>"
        f"<td class='text'>{escape(row['hostname'])}</td><td>{_percent(row.get('last_share'))}</td>"
        f"<td>{_number(row.get('lost_percent'), 1)}</td><td class='text'>{escape(row['kind'])}</td>"
        f"<td>{_number(row.get('time_ratio'))}</td><td>{_number(row.get('work_ratio'))}</td></tr>"
        for row in diagnosis.get("slow_nodes") or [])
    where = (f"<table class='slow-ranks'>{header.format('rank / node')}{rows}</table>" if rows else
             '<p class="muted">No slow rank or node: none kept the others waiting beyond its share.</p>')
    episodes = diagnosis.get("episodes") or []
    when = '<p class="muted">No episode: no window of segments slower than their intrinsic time.</p>'
    if episodes:
        body = "".join(
            f"<tr><td>{_number(row.get('start_s'))}</td><td>{_number(row.get('end_s'))}</td>"
            f"<td class='text'>{escape(str(row.get('start_utc') or '–'))}</td>"
            f"<td class='text'>{escape(str(row.get('end_utc') or '–'))}</td>"
            f"<td>{row['first_segment']}–{row['last_segment']}</td><td>{_number(row.get('lost_percent'), 1)}</td>"
            f"<td class='text'>{escape(', '.join(str(rank) for rank in row.get('ranks') or []))}</td></tr>"
            for row in episodes)
        when = ("<table class='episodes'><tr><th>start s</th><th>end s</th><th class='text'>start (UTC)</th>"
                "<th class='text'>end (UTC)</th><th>segments</th><th>lost, % of run</th>"
                f"<th class='text'>ranks last</th></tr>{body}</table>")
    split = diagnosis.get("components") or {}
    what = ("<table class='components'><tr><th class='text'>% of the run time</th><th>compute</th><th>MPI</th>"
            "<th>file I/O</th></tr>" + "".join(
                f"<tr><th class='text'>{label}</th>" + "".join(
                    f"<td>{_number((split.get(key) or {}).get(component), 1)}</td>"
                    for component in ("compute", "mpi", "io")) + "</tr>"
                for key, label in (("run", "run time"), ("lost", "lost time"))) + "</table>")
    return {"where": where, "when": when, "what": what}


def _configuration(run: RunView) -> str:
    if not run.configuration:
        return '<p class="muted">The run file holds no configuration table.</p>'
    rows = "".join(f"<tr><td class='text'>{escape(name)}</td><td class='text'>{escape(value)}</td></tr>"
                   for name, value in run.configuration)
    return f"<table><tr><th class='text'>setting</th><th class='text'>value used</th></tr>{rows}</table>"


def render_page(run: RunView, charts: dict[str, bytes | None]) -> str:
    """charts: name → PNG bytes (None when the chart has nothing to show)."""
    def chart(name: str, alt: str, absent: str) -> str:
        png = charts.get(name)
        return image_tag(png, alt) if png else f'<p class="muted">{escape(absent)}</p>'

    report = run.report
    diagnosis = _diagnosis_tables(report)
    # What happened to this run first (where, when, what), then the detail by group.
    sections = [
        f"<h1>Tremor report</h1><p class='muted'>{escape(run.path)} · Tremor {escape(str(report.get('tremor_version', '')))}</p>",
        _headline(report),
        "<h2>Run</h2>", _run_facts(run),
        "<h2>Where: ranks and nodes the others waited for</h2>", diagnosis["where"],
        chart("stragglers", "impact per late rank and node", "No interfered segment: no straggler."),
        "<h2>When: episodes</h2>", diagnosis["when"],
        chart("speed", "normalised speed per rank and time, episodes outlined", "No per-rank detail to map."),
        "<h2>What: compute, MPI and file I/O</h2>", diagnosis["what"],
        chart("components", "run time and lost time split into compute, MPI and file I/O",
              "No component split."),
        "<h2>Segment timeline</h2>",
        chart("timeline", "segment durations, the groups that lost most in colour, interfered segments ringed "
              "in red", "No segments."),
        "<h2>Groups</h2>", _groups_table(report),
        chart("distributions", "duration distribution of the groups that lost most, with the median + k·MAD "
              "threshold", "No usable group to plot."),
        "<h2>Predicted run time at larger scale</h2>",
        chart("predictions", "predicted run time with prediction intervals for one run and confidence intervals",
              "No prediction available."),
        _predictions_table(report),
        "<h2>Warnings</h2>", _warnings(report),
        "<h2>Effective configuration</h2>", _configuration(run),
    ]
    return document("Tremor report", HTML_MARKER.decode(), sections)
