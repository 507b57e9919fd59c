#!/usr/bin/python3
"""Regenerates the statistics reference vectors (vectors_*.json) the C++ tests read.

Every value is computed here from its formula (scipy.special / scipy.stats,
exact rational arithmetic for the decision rules) or by a seeded simulation;
see README.md beside this file for what each file holds.

    /usr/bin/python3 test/reference/generate_vectors.py [--output DIR]

Without --output the files beside this script are rewritten.
"""

import argparse
import json
import pathlib
import sys

import numpy
import scipy

import gev_vectors
import rule_vectors


def build():
    """File name -> content, in the order the files are written."""
    fits = gev_vectors.gev_fits()
    return {
        "vectors_gev_functions.json": gev_vectors.gev_functions(),
        "vectors_gev_fits.json": fits,
        "vectors_gev_edge.json": gev_vectors.gev_edge(fits["cases"][0]["sample"]),
        "vectors_stability_n15.json": gev_vectors.stability_n15(),
        "vectors_bootstrap.json": rule_vectors.bootstrap(),
        "vectors_clustering.json": rule_vectors.clustering(),
        "vectors_mad.json": rule_vectors.mad(),
        "vectors_logistic.json": rule_vectors.logistic(),
        "vectors_quantization.json": rule_vectors.quantization(),
    }


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=pathlib.Path, default=here, help="directory to write (default: %(default)s)")
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    meta = {"generator": "test/reference/generate_vectors.py", "numpy": numpy.__version__, "scipy": scipy.__version__,
            "python": ".".join(map(str, sys.version_info[:3]))}
    for name, content in build().items():
        text = json.dumps(dict({"meta": meta}, **content), indent=1, allow_nan=False)
        (args.output / name).write_text(text + "\n")
        print(f"wrote {args.output / name}")


if __name__ == "__main__":
    main()
