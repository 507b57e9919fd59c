#!/usr/bin/env python3
"""Writes a sample run file with the C++ writer, then checks with h5py that
every item documented in docs/schema.md is present with the documented kind,
type and shape, and that the file holds nothing undocumented."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*(\w+)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|")


def metric_names(metrics_def):
    text = open(metrics_def, encoding="utf-8").read()
    quantized = re.findall(r"^TREMOR_QUANTIZED\((\w+),", text, re.M)
    features = re.findall(r"^TREMOR_FEATURE\((\w+),", text, re.M)
    return quantized, features


def documented_items(schema_md, quantized, features):
    items = []
    for line in open(schema_md, encoding="utf-8"):
        match = ROW.match(line)
        if not match:
            continue
        path, kind, dtype, shape = match.groups()
        expanded = [(path, shape)]
        if "<metric>" in path:  # each metric has its own bin count B_m
            expanded = [(path.replace("<metric>", m), shape.replace("B_m", "B_" + m)) for m in quantized]
        elif "<feature>" in path:
            expanded = [(path.replace("<feature>", f), shape) for f in features]
        items += [(name, kind, dtype, item_shape) for name, item_shape in expanded]
    return items


def type_matches(value_dtype, documented):
    if documented == "string":
        return h5py.check_string_dtype(value_dtype) is not None
    return value_dtype == np.dtype(documented)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writer", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()

    quantized, features = metric_names(args.metrics)
    items = documented_items(args.schema, quantized, features)
    problems = []
    if len(items) < 60:
        problems.append(f"only {len(items)} documented items parsed from {args.schema}")

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        path = os.path.join(tmp, "sample.h5")
        subprocess.run([args.writer, path], check=True)
        with h5py.File(path, "r") as f:
            sizes = {"F": len(features)}
            documented = set()
            for name, kind, dtype, shape in items:
                documented.add(name)
                if kind == "attribute":
                    owner, attribute = name.split("@")
                    owner = owner or "/"
                    if owner not in f or attribute not in f[owner].attrs:
                        problems.append(f"missing attribute {name}")
                        continue
                    value = f[owner].attrs[attribute]
                    # Fixed-length string attributes: h5py gives numpy.bytes_.
                    ok = isinstance(value, bytes) if dtype == "string" else np.asarray(value).dtype == np.dtype(dtype)
                    if not ok:
                        problems.append(f"{name}: got {type(value).__name__} {np.asarray(value).dtype}, documented {dtype}")
                    continue
                if name not in f:
                    problems.append(f"missing {kind} {name}")
                    continue
                obj = f[name]
                if kind == "group":
                    if not isinstance(obj, h5py.Group):
                        problems.append(f"{name} is not a group")
                    continue
                if not isinstance(obj, h5py.Dataset):
                    problems.append(f"{name} is not a dataset")
                    continue
                if not type_matches(obj.dtype, dtype):
                    problems.append(f"{name}: dtype {obj.dtype}, documented {dtype}")
                symbols = [s.strip() for s in shape.strip("[]").split(",")]
                if len(symbols) != obj.ndim:
                    problems.append(f"{name}: rank {obj.ndim}, documented {shape}")
                    continue
                for symbol, extent in zip(symbols, obj.shape):
                    if sizes.setdefault(symbol, extent) != extent:
                        problems.append(f"{name}: {symbol} = {extent}, elsewhere {sizes[symbol]}")
            if sizes.get("P") != f.attrs["world_size"]:
                problems.append(f"P = {sizes.get('P')} but world_size = {f.attrs['world_size']}")

            present = set()

            def collect(name, obj):
                full = "/" + name
                if not full.startswith("/analysis"):
                    present.add(full)
                    present.update(f"{full}@{a}" for a in obj.attrs)
            f.visititems(collect)
            present.update(f"/@{a}" for a in f.attrs)
            for name in sorted(present - documented):
                problems.append(f"undocumented item in the file: {name}")

            # What the analysis adds through RunFileAppender is readable too.
            report = json.loads(f["/analysis/report_json"].asstr()[()])
            if report.get("interference_percent") != 3.5:
                problems.append("/analysis/report_json did not round-trip")
            if list(f["/analysis/groups/label"].asstr()[:]) != ["low", "high"]:
                problems.append("/analysis/groups/label did not round-trip")
            if f["/analysis"].attrs["groups_used"] != 2:
                problems.append("/analysis@groups_used did not round-trip")
            if list(f["/ranks/hostname"].asstr()[:3]) != ["node0", "node0", "node1"]:
                problems.append("/ranks/hostname values differ from the sample")

    for problem in problems:
        print("FAIL:", problem)
    print(f"checked {len(items)} documented items: {'OK' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
