"""The order groups are shown in: largest impact first. A real application has
hundreds of groups (NWChem: 251), most with no lost time; the page colours,
plots and lists first those that cost the run most."""
from __future__ import annotations

# Groups with their own colour in the timeline (the rest share one grey) and
# panels in the histogram chart.
COLOURED_GROUPS = 8
HISTOGRAM_GROUPS = 12


def impact_key(report: dict) -> str:
    """The headline method's lost time per group: the primary estimate's, or the 4·MAD impact."""
    return "impact_s" if report.get("method") == "mad4" else "lost_s"


def group_impact(group: dict, key: str) -> float:
    value = group.get(key)
    return float(value) if value is not None else 0.0


def groups_by_impact(report: dict) -> list[dict]:
    """Usable groups, largest lost time first; ties (often zero) by total time, then group number."""
    key = impact_key(report)
    return sorted(report.get("groups") or [],
                  key=lambda group: (-group_impact(group, key), -(group.get("time_s") or 0.0), group["index"]))
