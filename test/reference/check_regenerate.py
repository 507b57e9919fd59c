#!/usr/bin/python3
"""Regenerates the reference vectors into a temporary directory and compares them
with the committed ones: same files, same structure, same strings, integers and
booleans, floats within a tight tolerance. Any drift (an edited generator, an
edited JSON file, a changed library) fails with the paths that differ.

    check_regenerate.py [--reference-dir DIR] [--relative 1e-12] [--absolute 1e-14]
"""

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
IGNORED_KEYS = {"meta"}  # library versions: informative, not part of the values


def compare(new, old, path, relative, absolute, out):
    if isinstance(old, dict):
        if not isinstance(new, dict):
            out.append(f"{path}: object expected")
            return
        for key in sorted((set(old) | set(new)) - IGNORED_KEYS):
            if key not in new or key not in old:
                out.append(f"{path}/{key}: only in the {'committed' if key in old else 'regenerated'} file")
            else:
                compare(new[key], old[key], f"{path}/{key}", relative, absolute, out)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            out.append(f"{path}: list of {len(old)} expected")
            return
        for i, (a, b) in enumerate(zip(new, old)):
            compare(a, b, f"{path}[{i}]", relative, absolute, out)
    elif isinstance(old, float) and isinstance(new, (int, float)) and not isinstance(new, bool):
        if not math.isclose(new, old, rel_tol=relative, abs_tol=absolute):
            out.append(f"{path}: regenerated {new!r}, committed {old!r}")
    elif type(new) is not type(old) or new != old:
        out.append(f"{path}: regenerated {new!r}, committed {old!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-dir", type=pathlib.Path, default=HERE)
    parser.add_argument("--relative", type=float, default=1e-12)
    parser.add_argument("--absolute", type=float, default=1e-14)
    args = parser.parse_args()
    committed = sorted(p.name for p in args.reference_dir.glob("vectors_*.json"))
    with tempfile.TemporaryDirectory(prefix="tremor-vectors-") as scratch:
        # No __pycache__ left in the source tree by a test run.
        environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        subprocess.run([sys.executable, str(HERE / "generate_vectors.py"), "--output", scratch], check=True,
                       stdout=subprocess.DEVNULL, env=environment)
        regenerated = sorted(p.name for p in pathlib.Path(scratch).glob("vectors_*.json"))
        failures = []
        for name in sorted(set(committed) | set(regenerated)):
            if name not in committed or name not in regenerated:
                failures.append(f"{name}: only {'committed' if name in committed else 'regenerated'}")
                continue
            new = json.loads((pathlib.Path(scratch) / name).read_text())
            old = json.loads((args.reference_dir / name).read_text())
            differences = []
            compare(new, old, "", args.relative, args.absolute, differences)
            failures += [f"{name}{d}" for d in differences]
            print(f"{name}: {'ok' if not differences else f'{len(differences)} difference(s)'}")
    for line in failures[:50]:
        print(line)
    if len(failures) > 50:
        print(f"... and {len(failures) - 50} more")
    if failures:
        print("reference vectors drifted: rerun test/reference/generate_vectors.py and review the change")
        return 1
    print(f"{len(committed)} reference files reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
