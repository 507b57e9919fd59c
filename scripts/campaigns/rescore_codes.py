#!/usr/bin/python3
"""Does storing values as 2-byte log codes change the analysis? Re-scores kept run files.

For each run file, `tremor analyze --json` runs twice: on the file as it is, and on a copy whose every
stored value (bin representatives and the segment table) has gone through the log code of
docs/statistics.md#quantization (value -> code -> the code's value, within 1/2048). Reported per file:
the class, the primary estimate and the paper's 4*MAD figure on both, and their differences.

    scripts/campaigns/rescore_codes.py --tremor B/estimators/tremor RUN.h5... [--output DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign_common as common  # noqa: E402

common.ensure_debian_python()
import h5py  # noqa: E402
import numpy as np  # noqa: E402

UNITS_PER_SECOND = 2.0 ** 30
SEGMENT_COLUMNS = {"duration_s": True, "duration_upper_s": True, "work": False, "mpi_time_s": True,
                   "io_time_s": True, "late_wait_s": True}  # column -> in seconds


def through_code(values, seconds):
    """value -> its log code -> the code's value (tremor/log_code.hpp), vectorized."""
    units = np.asarray(values, dtype=np.float64) * (UNITS_PER_SECOND if seconds else 1.0)
    out = np.zeros_like(units)
    coded = (units >= 1.0) & np.isfinite(units)
    mantissa, exponent = np.frexp(np.minimum(units[coded], 2.0 ** 63 - 1024))
    exponent = exponent - 1
    fraction = np.floor((mantissa * 2.0 - 1.0) * 1024.0)
    step = np.ldexp(1.0, exponent - 10)
    lower = (1024.0 + fraction) * step
    if seconds:
        out[coded] = (lower + 0.5 * step) / UNITS_PER_SECOND
    else:  # counts below 2048 are exact
        out[coded] = np.where(exponent <= 10, lower, lower + 0.5 * step)
    return out


def code_copy(source, target):
    shutil.copyfile(source, target)
    with h5py.File(target, "r+") as f:
        if "value" in f["bins/duration"]:
            raise SystemExit(f"{source}: its values are log codes already (schema 3)")
        for metric in f["bins"]:
            group = f["bins"][metric]
            unit = group.attrs["unit"]
            seconds = (unit.decode() if isinstance(unit, bytes) else unit) == "s"
            count = group["count"][:]
            reps = np.where(count > 0, group["sum"][:] / np.maximum(count, 1), 0.0)
            coded = through_code(reps, seconds)
            group["sum"][...] = coded * count
            group["min"][...] = coded
            group["max"][...] = coded
        for column, seconds in SEGMENT_COLUMNS.items():
            if column in f["segments"]:
                f["segments"][column][...] = through_code(f["segments"][column][:], seconds)


def analyze(tremor, path):
    result = subprocess.run([tremor, "analyze", "--json", path], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"tremor analyze {path}: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    return {"class": report["class"], "primary": report["lost_percent"], "paper": report["paper_mad4_percent"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tremor", required=True, help="the tremor command (B/estimators/tremor)")
    parser.add_argument("--output", help="directory for rescore.csv and summary.md")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in args.files:
            copy = os.path.join(scratch, "coded.h5")
            code_copy(path, copy)
            before, after = analyze(args.tremor, path), analyze(args.tremor, copy)
            os.remove(copy)
            rows.append({"file": os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path)), "class": before["class"], "class_coded": after["class"],
                         "primary": before["primary"], "primary_coded": after["primary"],
                         "primary_diff_pp": abs(after["primary"] - before["primary"]),
                         "paper": before["paper"], "paper_coded": after["paper"],
                         "paper_diff_pp": abs(after["paper"] - before["paper"])})
            print(f"{rows[-1]['file']}: {before['class']}/{after['class']} primary {before['primary']:.3f} -> "
                  f"{after['primary']:.3f}, 4*MAD {before['paper']:.3f} -> {after['paper']:.3f}", flush=True)
    same_class = sum(r["class"] == r["class_coded"] for r in rows)
    worst_primary = max(r["primary_diff_pp"] for r in rows)
    worst_paper = max(r["paper_diff_pp"] for r in rows)
    median_primary = float(np.median([r["primary_diff_pp"] for r in rows]))
    summary = (f"{len(rows)} runs: same class in {same_class}; primary estimate |difference| median "
               f"{median_primary:.4f} pp, max {worst_primary:.4f} pp; 4*MAD max {worst_paper:.4f} pp")
    print(summary)
    if args.output:
        os.makedirs(args.output, exist_ok=True)
        columns = list(rows[0].keys())
        common.write_csv(os.path.join(args.output, "rescore.csv"), rows, columns)
        common.write_markdown_table(os.path.join(args.output, "summary.md"), "Re-scored through the log code", rows,
                                    columns, notes=[summary])
    return 0 if same_class == len(rows) and worst_primary <= 0.1 and worst_paper <= 0.1 else 1


if __name__ == "__main__":
    sys.exit(main())
