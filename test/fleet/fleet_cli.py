#!/usr/bin/python3
"""`tremor fleet` end to end on generated reports (scripts/fleet_generate.py).

    fleet_cli.py --tremor BIN --generator fleet_generate.py CASE

Each case says which wrong implementation it fails.
"""

import argparse
import csv
import importlib.util
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("meta", "runs", "nodes", "run_nodes", "run_ranks", "node_days")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class Fleet:
    def __init__(self, tremor, generator, top):
        self.tremor, self.top = tremor, top
        spec = importlib.util.spec_from_file_location("fleet_generate", generator)
        self.generator = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.generator)
        self.db = os.path.join(top, "fleet.db")

    def run(self, *args, expect=0):
        done = subprocess.run([self.tremor, "fleet", *args], capture_output=True, text=True, timeout=100)
        if expect is not None and (done.returncode == 0) != (expect == 0):
            fail(f"tremor fleet {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
        return done

    def generate(self, name, runs, **options):
        out = os.path.join(self.top, name)
        self.generator.generate(out, runs, options.pop("nodes_per_run", 4), options.pop("pool", 8), **options)
        return out

    def counts(self, db=None):
        with sqlite3.connect(db or self.db) as connection:
            return {t: connection.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}

    def query(self, sql):
        with sqlite3.connect(self.db) as connection:
            return connection.execute(sql).fetchall()


def idempotent(fleet):
    """Fails an indexer that inserts a run again (or keeps its old node rows) when it is indexed twice, and one
    that refuses the second copy (a UNIQUE or primary-key error) instead of replacing it."""
    reports = fleet.generate("reports", 30)
    fleet.run("index", reports, "--db", fleet.db)
    first = fleet.counts()
    days = fleet.query("SELECT * FROM node_days ORDER BY node, day")
    again = fleet.run("index", reports, "--db", fleet.db)
    check("30 runs indexed" in again.stderr and "0 files skipped" in again.stderr,
          f"the second pass did not store every run again:\n{again.stderr}")
    check(fleet.counts() == first, f"indexing twice changed the rows: {first} -> {fleet.counts()}")
    check(fleet.query("SELECT * FROM node_days ORDER BY node, day") == days, "indexing twice changed node_days")
    check(first["runs"] == 30 and first["run_nodes"] == 120, f"rows {first}")


def damaged_tree(fleet):
    reports = fleet.generate("reports", 10)
    bad = os.path.join(reports, "bad")
    os.makedirs(bad)
    good = sorted(os.path.join(reports, "d0000", n) for n in os.listdir(os.path.join(reports, "d0000")))[0]
    text = open(good).read()
    open(os.path.join(bad, "truncated.json"), "w").write(text[: len(text) // 2])
    json.dump({"hello": "world"}, open(os.path.join(bad, "foreign.json"), "w"))
    old = json.loads(text)
    del old["hosts"], old["run_id"]
    json.dump(old, open(os.path.join(bad, "old_report.json"), "w"))
    open(os.path.join(bad, "garbage.h5"), "wb").write(os.urandom(4096))
    return reports, ["truncated.json", "foreign.json", "old_report.json", "garbage.h5"]


def damaged_and_foreign(fleet):
    """Fails an indexer that stops at a bad file, indexes a foreign JSON as an empty run, or half-indexes."""
    reports, bad = damaged_tree(fleet)
    done = fleet.run("index", reports, "--db", fleet.db)
    for name in bad:
        check(re.search(r"skipped \S*" + re.escape(name), done.stderr), f"{name} not listed as skipped:\n{done.stderr}")
    counts = fleet.counts()
    check(counts["runs"] == 10 and counts["run_nodes"] == 40, f"rows {counts}")


def strict(fleet):
    """Fails a --strict that still exits 0 when a file is skipped."""
    reports, bad = damaged_tree(fleet)
    done = fleet.run("index", "--strict", reports, "--db", fleet.db, expect=2)
    check(done.returncode == 2, f"--strict exit {done.returncode}")
    check("--strict" in done.stderr, done.stderr)
    counts = fleet.counts()
    check(counts["run_nodes"] == 4 * counts["runs"], f"a run half-indexed: {counts}")


def concurrent_writers(fleet):
    """Fails without a busy timeout (the second writer gets 'database is locked') or with lost runs."""
    first = fleet.generate("one", 300, seed=1)
    second = fleet.generate("two", 300, seed=2, start=1796083200.0 + 86400 * 3)
    processes = [subprocess.Popen([fleet.tremor, "fleet", "index", d, "--db", fleet.db], stderr=subprocess.PIPE,
                                  text=True) for d in (first, second, first)]
    for process in processes:
        _, err = process.communicate(timeout=100)
        check(process.returncode == 0, f"a concurrent indexer failed: {err}")
    counts = fleet.counts()
    check(counts["runs"] == 600 and counts["run_nodes"] == 2400, f"rows {counts}")
    total = fleet.query("SELECT SUM(runs) FROM node_days")[0][0]
    check(total == 2400, f"node_days counts {total} node-runs, not 2400")


def export_round_trip(fleet):
    """Fails an export that drops the header, splits a text holding a comma or a quote, or loses NULLs."""
    reports = fleet.generate("reports", 20)
    path = os.path.join(reports, "d0000", "odd.json")
    odd = json.load(open(sorted(os.path.join(reports, "d0000", n) for n in os.listdir(os.path.join(reports, "d0000")))[0]))
    odd.update(run_id="odd-run", application='say "hi", twice', lost_percent=None)
    json.dump(odd, open(path, "w"))
    fleet.run("index", reports, "--db", fleet.db)
    out = os.path.join(fleet.top, "csv")
    # A file of somebody else's where a table would go: refused, kept, nothing written.
    os.makedirs(out)
    with open(os.path.join(out, "runs.csv"), "w") as foreign:
        foreign.write("somebody else's data\n")
    fleet.run("export", "--csv", out, "--db", fleet.db, expect=4)
    check(open(os.path.join(out, "runs.csv")).read() == "somebody else's data\n" and os.listdir(out) == ["runs.csv"],
          "export overwrote a file it did not write, or wrote beside it")
    os.unlink(os.path.join(out, "runs.csv"))
    fleet.run("export", "--csv", out, "--db", fleet.db)
    fleet.run("export", "--csv", out, "--db", fleet.db)  # its own files: replaced
    counts = fleet.counts()
    loaded = sqlite3.connect(":memory:")
    for table in TABLES:
        rows = list(csv.reader(open(os.path.join(out, table + ".csv"), newline="")))
        check(len(rows) - 1 == counts[table], f"{table}.csv has {len(rows) - 1} rows, the table {counts[table]}")
        header = rows[0]
        loaded.execute(f"CREATE TABLE {table} ({', '.join(header)})")
        loaded.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(header))})",
                           [[None if v == "" else v for v in row] for row in rows[1:]])
    app, lost = loaded.execute("SELECT application, lost_percent FROM runs WHERE run_key='odd-run'").fetchone()
    check(app == 'say "hi", twice' and lost is None, f"odd run came back as {app!r}, {lost!r}")
    total = loaded.execute("SELECT SUM(CAST(wait_ms AS INTEGER)) FROM run_nodes").fetchone()[0]
    check(total == fleet.query("SELECT SUM(wait_ms) FROM run_nodes")[0][0], "wait_ms differ after the round trip")


def ranking(fleet):
    """Fails a ranking by raw share or by lost time alone (the once-slow node n0005 would lead), and a drain
    line for a node below the threshold."""
    reports = fleet.generate("reports", 80, slow={"n0003": 0.7}, noise=0.02)
    once = json.load(open(os.path.join(reports, "d0000", sorted(os.listdir(os.path.join(reports, "d0000")))[0])))
    once.update(run_id="once", hosts=["n0005", "n0009"], lost_percent=40.0)
    once["stragglers"] = {"nodes": [{"hostname": "n0005", "impact_s": 5000.0}], "ranks": []}
    once["diagnosis"] = {"slow_nodes": [{"hostname": "n0005"}], "slow_ranks": []}
    json.dump(once, open(os.path.join(reports, "once.json"), "w"))
    fleet.run("index", reports, "--db", fleet.db)
    nodes = json.loads(fleet.run("nodes", "--json", "--db", fleet.db).stdout)
    check(nodes[0]["node"] == "n0003", f"first node {nodes[0]}")
    check(nodes[0]["score"] > nodes[1]["score"] + 0.2, f"no clear margin: {nodes[:2]}")
    check(set(nodes[0]) == {"node", "runs", "slow_runs", "slow_share", "wilson_low", "baseline_share", "score",
                            "lost_s", "first_utc", "last_utc"}, f"keys {sorted(nodes[0])}")
    names = [n["node"] for n in nodes]
    check(names.index("n0005") > 0, "the node slow in its only run came first")
    drain = fleet.run("nodes", "--suggest-drain", "--db", fleet.db).stdout.splitlines()
    check(len(drain) >= 1 and re.fullmatch(
        r'scontrol update NodeName=n0003 State=DRAIN Reason="tremor: slow in \d+ of \d+ runs since \d{4}-\d\d-\d\d"',
        drain[0]), f"drain lines {drain}")
    check(not any("n0009" in line for line in drain), f"drain names a node never slow: {drain}")
    # The default threshold (0.1): a node only marginally above the fleet's share is not drained.
    drained = {re.search(r"NodeName=(\S+)", line).group(1) for line in drain}
    check(drained == {n["node"] for n in nodes if n["score"] > 0.1 and n["runs"] >= 5},
          f"drain lines {drain} against the scores {[(n['node'], n['score']) for n in nodes[:4]]}")
    check(fleet.run("nodes", "--csv", "--db", fleet.db).stdout.startswith("node,runs,slow_runs,"), "CSV header")
    shown = json.loads(fleet.run("show", "n0003", "--json", "--db", fleet.db).stdout)
    check(len(shown) == nodes[0]["runs"] and sum(r["slow"] for r in shown) == nodes[0]["slow_runs"], "show n0003")
    per_app = json.loads(fleet.run("runs", "--json", "--db", fleet.db).stdout)
    check({d["application"] for d in per_app} >= {"lulesh", "amg"}, f"runs: {per_app[:2]}")
    check(sum(d["runs"] for d in per_app) == 81, "runs per application do not add up to 81")
    fleet.run("nodes", "--since", "3x", "--db", fleet.db, expect=1)
    for bad in ("nan", "inf", "1e999", "2"):  # a score lies in [-1, 1]
        fleet.run("nodes", "--suggest-drain", "--threshold", bad, "--db", fleet.db, expect=1)


def run_file(fleet):
    """Fails an indexer that analyses a run file whose report it indexed (two runs for one), or that gives a run
    file and its report different keys."""
    source = os.path.join(HERE, "..", "fuzz", "corpus", "run_file", "tiny_real_run.h5")
    runs = os.path.join(fleet.top, "runs")
    os.makedirs(runs)
    shutil.copy(source, os.path.join(runs, "tiny.h5"))
    alone = os.path.join(fleet.top, "alone.db")
    fleet.run("index", os.path.join(runs, "tiny.h5"), "--db", alone)
    key = sqlite3.connect(alone).execute("SELECT run_key FROM runs").fetchall()
    check(len(key) == 1, f"run file gave {key}")
    report = subprocess.run([fleet.tremor, "analyze", "--json", os.path.join(runs, "tiny.h5")], capture_output=True,
                            text=True, timeout=100)
    check(report.returncode == 0, report.stderr)
    open(os.path.join(runs, "tiny.json"), "w").write(report.stdout)
    done = fleet.run("index", runs, "--db", fleet.db)
    check(fleet.counts()["runs"] == 1, f"{fleet.counts()['runs']} runs from one run file and its report")
    check("1 run files already indexed" in done.stderr, done.stderr)
    check(fleet.query("SELECT run_key FROM runs") == key, "the report and the run file keyed differently")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--generator", required=True)
    parser.add_argument("case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as top:
        globals()[args.case](Fleet(args.tremor, args.generator, top))
    print("ok")


if __name__ == "__main__":
    main()
