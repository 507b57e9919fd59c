#!/usr/bin/env python3
"""/environment of a real run against what this machine says, and the
environment warnings of its report.

usage: environment.py --launcher CMD --np N --preload LIB --tremor TREMOR
                      --case facts|oversubscribed -- PROGRAM ARGS...

facts: every node fact matches /proc/cpuinfo, sysfs, `uname -r`,
/etc/os-release; the binary matches os.stat and `readelf -n`; each rank's
affinity matches os.sched_getaffinity (the launcher does not bind);
OMP_NUM_THREADS=3 and MKL_NUM_THREADS=2 are recorded, PATH is not; the report
warns about unpinned ranks, not about oversubscription (NP <= CPUs), and
gives the governor/turbo warnings or the one "unknown" note as sysfs allows;
`tremor analyze` reads the file, and the file without /environment (as older
builds wrote it) too, with no environment warning.
oversubscribed: more ranks than CPUs gives the oversubscription warning.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py

from launch import mpi_command, preloaded  # same folder

CPU = "/sys/devices/system/cpu"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("CHECK FAILED: " + message)


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError as error:
        return error


def cpu_list(cpus):
    cpus, out, i = sorted(cpus), [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def parse_cpu_list(text):
    cpus = set()
    for item in text.split(","):
        low, _, high = item.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def expect_file_fact(value, path, expected_from_text, name):
    """A sysfs fact: the parsed file when readable, else unknown naming the path."""
    text = read(path)
    if isinstance(text, OSError):
        check(value.startswith("unknown: ") and path in value and text.strerror in value,
              f"{name}: {path} is unreadable ({text.strerror}) but recorded {value!r}")
        return None
    expected = expected_from_text(text)
    check(value == expected, f"{name}: recorded {value!r}, the machine says {expected!r}")
    return expected


def build_id(program):
    notes = subprocess.run(["readelf", "-n", program], capture_output=True, text=True, check=True).stdout
    match = re.search(r"Build ID:\s*([0-9a-f]+)", notes)
    return match.group(1) if match else None


def report_warnings(json_path):
    with open(json_path) as handle:
        return [w["code"] for w in json.load(handle)["warnings"]]


def check_node_facts(node, program, f):
    text = lambda name: node[name].asstr()[0]
    cpuinfo = open("/proc/cpuinfo").read()
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    if model:
        check(text("cpu_model") == model.group(1).strip(), f"cpu_model {text('cpu_model')!r} != {model.group(1)!r}")
    online = parse_cpu_list(read(f"{CPU}/online"))
    check(text("cpu_count") == str(len(online)), f"cpu_count {text('cpu_count')} != {len(online)} online CPUs")
    cores = {read(f"{CPU}/cpu{c}/topology/thread_siblings_list") for c in online}
    check(text("core_count") == str(len(cores)), f"core_count {text('core_count')} != {len(cores)}")
    expected_smt = read(f"{CPU}/smt/active")
    if not isinstance(expected_smt, OSError):
        check(text("smt") == ("on" if expected_smt == "1" else "off"), f"smt {text('smt')} vs smt/active {expected_smt}")
    first = min(online)
    governor = expect_file_fact(text("governor"), f"{CPU}/cpu{first}/cpufreq/scaling_governor", lambda t: t, "governor")
    for fact, file in (("frequency_min_mhz", "scaling_min_freq"), ("frequency_max_mhz", "scaling_max_freq")):
        values = [read(f"{CPU}/cpu{c}/cpufreq/{file}") for c in online]
        if all(isinstance(v, str) for v in values):
            pick = min if fact == "frequency_min_mhz" else max
            check(abs(float(text(fact)) - pick(int(v) for v in values) / 1000) < 1e-3, f"{fact} {text(fact)}")
        else:
            check(text(fact).startswith("unknown: ") and file in text(fact), f"{fact}: {text(fact)!r} should be unknown")
    current = text("frequency_current_mhz")
    check(current.startswith("unknown: ") == isinstance(read(f"{CPU}/cpu{first}/cpufreq/scaling_cur_freq"), OSError),
          f"frequency_current_mhz {current!r}")
    no_turbo, boost = read(f"{CPU}/intel_pstate/no_turbo"), read(f"{CPU}/cpufreq/boost")
    if isinstance(no_turbo, str):
        turbo = "off" if no_turbo == "1" else "on"
    elif isinstance(boost, str):
        turbo = "on" if boost == "1" else "off"
    else:
        turbo = None
        check(text("turbo").startswith("unknown: ") and "no_turbo" in text("turbo") and "boost" in text("turbo"),
              f"turbo {text('turbo')!r}: neither no_turbo nor boost exists")
    if turbo:
        check(text("turbo") == turbo, f"turbo {text('turbo')} != {turbo}")
    uname = subprocess.run(["uname", "-r"], capture_output=True, text=True, check=True).stdout.strip()
    check(text("kernel_release") == uname, f"kernel_release {text('kernel_release')!r} != uname -r {uname!r}")
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)"?$', open("/etc/os-release").read(), re.M).group(1)
    check(text("os_release") == pretty, f"os_release {text('os_release')!r} != {pretty!r}")
    mpi = text("mpi_library_version")
    first_line = f.attrs["mpi_library_version"]
    first_line = first_line.decode() if isinstance(first_line, bytes) else first_line
    # MPICH's text has many lines (the root attribute keeps the first); Open MPI's has one.
    full = "\n" in mpi if mpi.startswith("MPICH") else mpi.startswith("Open MPI")
    check(mpi.startswith(first_line.strip()) and full, f"mpi_library_version is not the full text: {mpi[:80]!r}")
    check(re.fullmatch(r"\d+\.\d+\.\d+\.\d+.*", text("papi_version")) is not None, f"papi_version {text('papi_version')!r}")
    check(re.fullmatch(r"\d+\.\d+\.\d+", text("hdf5_version")) is not None, f"hdf5_version {text('hdf5_version')!r}")
    real = os.path.realpath(shutil.which(program) or program)
    stat = os.stat(real)
    check(text("binary_path") == real, f"binary_path {text('binary_path')!r} != {real!r}")
    check(text("binary_size") == str(stat.st_size), f"binary_size {text('binary_size')} != {stat.st_size}")
    mtime = datetime.datetime.fromtimestamp(int(stat.st_mtime), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    check(text("binary_mtime") == mtime, f"binary_mtime {text('binary_mtime')} != {mtime}")
    expected_id = build_id(real)
    check(expected_id is not None and text("binary_build_id") == expected_id,
          f"binary_build_id {text('binary_build_id')} != readelf's {expected_id}")
    return governor, turbo


def run(opts, program, env_extra):
    out = tempfile.mkdtemp(prefix="tremor-env-")
    env = dict(os.environ, TREMOR_OUTPUT_DIR=out, LD_PRELOAD=opts.preload, TREMOR_REPORT="none", **env_extra)
    for name in list(env):  # what the test sets is what it checks
        if name.startswith(("OMP_", "MKL_")):
            del env[name]
    env.update(env_extra)
    command, env = preloaded(mpi_command(opts.launcher, opts.np, program), env)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        sys.exit(f"CHECK FAILED: {' '.join(command)} exited with {result.returncode}")
    files = glob.glob(os.path.join(out, "*.h5"))
    if len(files) != 1:
        sys.exit(f"CHECK FAILED: expected one run file in {out}, found {files}")
    return out, files[0]


def case_facts(opts, program):
    out, path = run(opts, program, {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "2"})
    try:
        with h5py.File(path, "r") as f:
            env = f["environment"]
            nodes = env["nodes"]
            check(list(nodes["hostname"].asstr()[:]) == [f["ranks/hostname"].asstr()[0]], "one node, the ranks' host")
            governor, turbo = check_node_facts(nodes, program[0], f)
            ranks = env["ranks"]
            check(list(ranks["rank"][:]) == list(range(opts.np)), "one environment row per rank")
            mine = cpu_list(os.sched_getaffinity(0))
            affinity = list(ranks["affinity"].asstr()[:])
            check(affinity == [mine] * opts.np, f"affinity {affinity}, expected {mine} on every rank (no binding)")
            shared = list(ranks["shares_cpu_with"].asstr()[:])
            if len(os.sched_getaffinity(0)) > 0 and opts.np == 2:
                check(shared == ["1", "0"], f"unbound ranks share their CPUs: {shared}")
            names = list(env["variables/name"].asstr()[:])
            values = dict(zip(names, env["variables/value"].asstr()[:]))
            check(values.get("OMP_NUM_THREADS") == "3" and values.get("MKL_NUM_THREADS") == "2",
                  f"OMP_NUM_THREADS / MKL_NUM_THREADS not recorded: {values}")
            check("PATH" not in values and "HOME" not in values, f"unrelated variables recorded: {names}")
            check(len(env["rank_differences/rank"]) == 0,
                  f"ranks differ: {list(env['rank_differences/name'].asstr()[:])}")
        codes = report_warnings(path[:-3] + ".json")
        print(f"warnings: {codes}")
        online = parse_cpu_list(read(f"{CPU}/online"))
        unpinned = os.sched_getaffinity(0) == online and len(online) > 1
        check(("environment_unpinned" in codes) == unpinned, f"unpinned warning should be {unpinned}: {codes}")
        check(("environment_oversubscribed" in codes) == (opts.np > len(os.sched_getaffinity(0))),
              f"oversubscription warning wrong for {opts.np} ranks on {len(os.sched_getaffinity(0))} CPUs: {codes}")
        check(("environment_governor" in codes) == (governor is not None and governor != "performance"),
              f"governor warning wrong for governor {governor}: {codes}")
        check(("environment_turbo" in codes) == (turbo == "on"), f"turbo warning wrong for turbo {turbo}: {codes}")
        check(("environment_unknown" in codes) == (governor is None or turbo is None),
              f"unknown note wrong (governor {governor}, turbo {turbo}): {codes}")
        check(codes.count("environment_unknown") <= 1, "more than one unknown note")

        analyzed = subprocess.run([opts.tremor, "analyze", "--json", path], capture_output=True, text=True)
        check(analyzed.returncode == 0, f"tremor analyze failed: {analyzed.stderr}")
        if analyzed.returncode == 0:
            offline = [w["code"] for w in json.loads(analyzed.stdout)["warnings"]]
            check([c for c in offline if c.startswith("environment_")] == [c for c in codes if c.startswith("environment_")],
                  f"tremor analyze gives other environment warnings: {offline}")
        # A file as older builds wrote it: no /environment, still analysed, no environment warning.
        old = os.path.join(out, "old.h5")
        shutil.copy(path, old)
        with h5py.File(old, "r+") as f:
            del f["environment"]
            if "analysis" in f:
                del f["analysis"]
        analyzed = subprocess.run([opts.tremor, "analyze", "--json", old], capture_output=True, text=True)
        check(analyzed.returncode == 0, f"tremor analyze of a file without /environment failed: {analyzed.stderr}")
        if analyzed.returncode == 0:
            offline = [w["code"] for w in json.loads(analyzed.stdout)["warnings"]]
            check(not any(c.startswith("environment_") for c in offline), f"environment warnings without /environment: {offline}")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def case_oversubscribed(opts, program):
    out, path = run(opts, program, {})
    try:
        cpus = len(os.sched_getaffinity(0))
        codes = report_warnings(path[:-3] + ".json")
        print(f"{opts.np} ranks on {cpus} CPUs; warnings: {codes}")
        check(opts.np > cpus, f"the case needs more ranks than the {cpus} CPUs")
        check("environment_oversubscribed" in codes, f"no oversubscription warning: {codes}")
        with h5py.File(path, "r") as f:
            counts = {len(parse_cpu_list(a)) for a in f["environment/ranks/affinity"].asstr()[:]}
            check(max(counts) <= cpus, f"affinity masks larger than the machine: {counts}")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--case", choices=["facts", "oversubscribed"], required=True)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    program = opts.program[1:] if opts.program and opts.program[0] == "--" else opts.program
    {"facts": case_facts, "oversubscribed": case_oversubscribed}[opts.case](opts, program)
    if failures:
        sys.exit(1)
    print("checks passed")


if __name__ == "__main__":
    main()
