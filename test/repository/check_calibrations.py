#!/usr/bin/env python3
"""Every calibration a test cites exists, and the tolerances recomputed from it
are sane.

usage: check_calibrations.py REPOSITORY       the check
       check_calibrations.py --self-test      a planted missing citation and
                                              broken tables are caught
1. Every path under validation/ or docs/validation/ named in the test
   drivers (test/**/*.py, test/**/CMakeLists.txt, validation/campaigns/*.py)
   or in docs/reliability.md exists (up to a brace or a wildcard: `kinds{,-check}`
   needs a path starting docs/validation/kinds).
2. test/common/calibration.py computes every tolerance from its tables; each
   is printed with the runs behind it and must be finite and in a plausible range.
"""
import glob
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import calibration  # noqa: E402

CITATION = re.compile(r"(?<![\w/.])((?:docs/)?validation/[\w./{*-]*)")


def cited_paths(top):
    sources = (glob.glob(os.path.join(top, "test", "**", "*.py"), recursive=True)
               + glob.glob(os.path.join(top, "test", "**", "CMakeLists.txt"), recursive=True)
               + glob.glob(os.path.join(top, "validation", "campaigns", "*.py"))
               + [os.path.join(top, "docs", "reliability.md")])
    for source in sources:
        # This checker's own examples of a bad citation are no citations.
        if not os.path.exists(source) or os.path.join(top, "test", "data") in source or \
                os.path.samefile(source, __file__):
            continue
        with open(source, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                for match in CITATION.finditer(line):
                    yield os.path.relpath(source, top), number, match.group(1).rstrip(".")


def exists(top, cited):
    """A path, or up to a brace or wildcard the start of one (`kinds{` names kinds*)."""
    base = re.split(r"[{*]", cited)[0]
    if base != cited:
        return bool(glob.glob(glob.escape(os.path.join(top, base)) + "*"))
    return os.path.exists(os.path.join(top, cited))


def missing_citations(top):
    return [(source, number, cited) for source, number, cited in cited_paths(top) if not exists(top, cited)]


def tolerances():
    """{name: (value, low, high, source)}: each recomputed tolerance and its plausible range."""
    means, sigma, freedom = calibration.injected_kinds()
    floor, clean_runs = calibration.quiet_floor()
    intrinsic, run_time, clean_freedom = calibration.clean_run_noise()
    diagnosis = calibration.diagnosis()
    scale, pairs = calibration.scale_error()
    kinds = "validation/kinds/demo/runs.csv"
    result = {f"injected kind {k}: estimate - truth, mean pp": (v, -2.0, 2.0, kinds) for k, v in means.items()}
    result.update({
        f"injected kinds: pooled sigma pp ({freedom} d.o.f.)": (sigma, 0.01, 1.0, kinds),
        f"quiet floor % ({clean_runs} clean runs)": (floor, 0.1, 5.0, kinds),
        f"clean runs: intrinsic run time sigma % ({clean_freedom} d.o.f.)": (intrinsic, 0.01, 5.0, kinds),
        f"clean runs: run time sigma % ({clean_freedom} d.o.f.)": (run_time, 0.01, 5.0, kinds),
        f"scale: headline error at 2x ({pairs} pairs)": (scale, 0.001, 0.5, "docs/validation/scale-2core-*")})
    for name, (mean, sd, runs) in diagnosis.items():
        result[f"diagnosis {name} mean ({runs} runs)"] = (mean, -5.0, 5.0, "validation/diagnosis/runs.csv")
        result[f"diagnosis {name} sigma"] = (sd, 0.0, 5.0, "validation/diagnosis/runs.csv")
    return result


def check(top):
    failures = 0
    for source, number, cited in missing_citations(top):
        print(f"FAIL {source}:{number} cites {cited}, which is not in the repository")
        failures += 1
    try:
        figures = tolerances()
    except calibration.CalibrationError as error:
        print(f"FAIL {error}")
        return failures + 1
    for name, (value, low, high, source) in figures.items():
        good = low <= value <= high
        failures += not good
        print(f"{'ok  ' if good else 'FAIL'} {name}: {value:.4f} (from {source}; plausible {low}..{high})")
    return failures


def self_test():
    failures = 0
    with tempfile.TemporaryDirectory() as top:
        os.makedirs(os.path.join(top, "test", "x"))
        os.makedirs(os.path.join(top, "validation", "kinds", "demo"))
        open(os.path.join(top, "validation", "kinds", "demo", "runs.csv"), "w").close()
        with open(os.path.join(top, "test", "x", "a.py"), "w") as handle:
            handle.write("# sigma from docs/validation/kinds{,-check}/demo and validation/kinds/demo/runs.csv\n")
        found = [cited for _, _, cited in missing_citations(top)]
        good = found == ["docs/validation/kinds{"]
        failures += not good
        print(f"{'ok  ' if good else 'FAIL'} a citation of a deleted table is caught, an existing one is not: {found}")
        table = os.path.join(top, "runs.csv")
        shutil.copy(calibration.KINDS_DEMO, table)
        with open(table) as handle:
            lines = handle.read().splitlines()
        column = lines[0].split(",").index("primary_percent")

        def spoiled(line):
            fields = line.split(",")
            if fields[1] == "sparse":
                fields[column] = "n/a"
            return ",".join(fields)

        broken = {"a missing table": None,
                  "no primary_percent column": [lines[0].replace("primary_percent", "p")] + lines[1:],
                  "a value that is not a number": [lines[0]] + [spoiled(line) for line in lines[1:]],
                  "a kind without runs": [line for line in lines if ",sparse," not in line]}
        for what, content in broken.items():
            if content is None:
                os.remove(table)
            else:
                with open(table, "w") as handle:
                    handle.write("\n".join(content) + "\n")
            try:
                calibration.injected_kinds(table)
                good = False
            except calibration.CalibrationError as error:
                good = True
                what += f" ({error})"
            failures += not good
            print(f"{'ok  ' if good else 'FAIL'} {what}: CalibrationError")
    return failures


def main():
    if sys.argv[1:] == ["--self-test"]:
        failures = self_test()
    elif len(sys.argv) == 2:
        failures = check(os.path.abspath(sys.argv[1]))
    else:
        sys.exit(__doc__)
    print("calibration checks " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
