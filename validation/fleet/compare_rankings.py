#!/usr/bin/python3
"""The campaign's two rankings: `tremor fleet nodes --json` over `tremor fleet
index` of the jobs' directories, and the independent rank_nodes.py over the
JSON reports alone; they must agree (same order, same run counts, scores
within 1e-9). Checks the campaign's claims: the slowed node first, with its
score gap to the second, and the once-slowed node's place.

    validation/fleet/compare_rankings.py RESULTS --tremor build-mpich/estimators/tremor

Writes RESULTS/ranking_tremor.json, RESULTS/ranking_independent.json and
RESULTS/summary.md; exit 1 when a claim or the agreement fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def tremor_ranking(tremor, jobs):
    with tempfile.TemporaryDirectory(prefix="fleet-campaign-db-") as work:
        database = os.path.join(work, "fleet.db")
        index = subprocess.run([tremor, "fleet", "index", jobs, "--db", database], capture_output=True, text=True)
        skipped = [line for line in index.stderr.splitlines() if line.strip()]
        if index.returncode != 0:
            raise SystemExit(f"tremor fleet index: exit {index.returncode}: {index.stderr[-1500:]}")
        nodes = subprocess.run([tremor, "fleet", "nodes", "--db", database, "--json"], capture_output=True, text=True,
                               check=True)
        return json.loads(nodes.stdout), skipped


def independent_ranking(jobs):
    result = subprocess.run([sys.executable, os.path.join(HERE, "rank_nodes.py"), jobs, "--json"], capture_output=True,
                            text=True, check=True)
    return json.loads(result.stdout)


def disagreements(theirs, mine):
    found = []
    if [r["node"] for r in theirs] != [r["node"] for r in mine]:
        found.append(f"order: tremor {[r['node'] for r in theirs]}, independent {[r['node'] for r in mine]}")
    for a, b in zip(theirs, mine):
        for key in ("runs", "slow_runs"):
            if a[key] != b[key]:
                found.append(f"{a['node']} {key}: tremor {a[key]}, independent {b[key]}")
        for key in ("wilson_low", "baseline_share", "score"):
            if abs(a[key] - b[key]) > 1e-9:
                found.append(f"{a['node']} {key}: tremor {a[key]!r}, independent {b[key]!r}")
        # The database keeps each run's wait in whole milliseconds.
        if abs(a["lost_s"] - b["lost_s"]) > 0.0005 * a["slow_runs"] + 1e-9:
            found.append(f"{a['node']} lost_s: tremor {a['lost_s']!r}, independent {b['lost_s']!r}")
    return found


def table(ranking):
    lines = ["| rank | node | runs | slow runs | slow share | Wilson 95 % low | baseline | score |",
             "|---|---|---|---|---|---|---|---|"]
    for place, row in enumerate(ranking, 1):
        lines.append(f"| {place} | {row['node']} | {row['runs']} | {row['slow_runs']} | {row['slow_share']:.3f} "
                     f"| {row['wilson_low']:.4f} | {row['baseline_share']:.4f} | {row['score']:+.4f} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--tremor", required=True)
    parser.add_argument("--slow-node", default="n3")
    parser.add_argument("--once-node", default="n6")
    opts = parser.parse_args()
    jobs = os.path.join(opts.results, "jobs")
    theirs, skipped = tremor_ranking(opts.tremor, jobs)
    mine = independent_ranking(jobs)
    for name, ranking in (("ranking_tremor.json", theirs), ("ranking_independent.json", mine)):
        with open(os.path.join(opts.results, name), "w") as handle:
            json.dump(ranking, handle, indent=1)
            handle.write("\n")
    order = [row["node"] for row in theirs]
    gap = theirs[0]["score"] - theirs[1]["score"] if len(theirs) > 1 else float("nan")
    claims = {f"{opts.slow_node} first": order[:1] == [opts.slow_node],
              f"{opts.once_node} not in the first 3": opts.once_node not in order[:3]}
    differ = disagreements(theirs, mine)
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    skipped_count = sum(line.startswith("tremor fleet: skipped ") for line in skipped)
    lines = [f"`tremor fleet nodes --json` of commit {commit.stdout.strip()} (index skipped {skipped_count} files"
             + (": reports without `hosts` or `run_id`, whose run files it analysed instead" if skipped_count else "")
             + "):", ""] + table(theirs) + [
        "", f"score gap first to second: {gap:.4f}; {opts.once_node} is number "
            f"{order.index(opts.once_node) + 1 if opts.once_node in order else '-'} of {len(order)}", ""]
    lines += [f"- {claim}: {'yes' if held else 'NO'}" for claim, held in claims.items()]
    lines += ["", "independent rank_nodes.py: " + ("the same order, counts and scores (1e-9)" if not differ
                                                 else "DIFFERS: " + "; ".join(differ))]
    with open(os.path.join(opts.results, "summary.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(claims.values()) and not differ else 1


if __name__ == "__main__":
    sys.exit(main())
