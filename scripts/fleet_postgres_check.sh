#!/usr/bin/env bash
# Loads a fleet database's export into a real PostgreSQL with the statements
# of docs/fleet.md ("A larger site: PostgreSQL"), and checks that every table
# has the same rows there and that the ranking's query gives the same
# per-node counts in both. Needs Debian's postgresql (a running cluster) and
# root (it runs psql as the postgres user); not part of the test suite.
# usage: scripts/fleet_postgres_check.sh TREMOR FLEET.db
set -euo pipefail
tremor=$(realpath "$1") db=$(realpath "$2")
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'cd /; rm -rf "$work"; su postgres -c "dropdb --if-exists tremor_fleet_check" 2>/dev/null || true' EXIT
cd "$work"
"$tremor" fleet export --csv fleet-csv --db "$db"
# The statements exactly as the page gives them: its first two code blocks.
/usr/bin/python3 - "$top/docs/fleet.md" > load.sql <<'PY'
import re, sys
page = open(sys.argv[1]).read()
part = page[page.index("## A larger site: PostgreSQL"):]
print("".join(re.findall(r"```(?:sql)?\n(.*?)```", part, re.S)[:2]))
PY
chmod -R a+rX "$work"
su postgres -c "dropdb --if-exists tremor_fleet_check && createdb tremor_fleet_check"
su postgres -c "cd '$work' && psql -q -v ON_ERROR_STOP=1 -d tremor_fleet_check -f load.sql"
status=0
for table in meta runs nodes run_nodes run_ranks node_days; do
  in_pg=$(su postgres -c "psql -tA -d tremor_fleet_check -c 'SELECT count(*) FROM $table'")
  in_sqlite=$(sqlite3 "$db" "SELECT count(*) FROM $table")
  echo "$table: $in_pg rows in PostgreSQL, $in_sqlite in SQLite"
  [ "$in_pg" = "$in_sqlite" ] || status=1
done
# The ranking's counts (estimators/fleet/src/store_queries.cpp, node_counts), ordered.
query="SELECT n.name, SUM(d.runs), SUM(d.slow_runs), SUM(d.slow_wait_ms) FROM node_days d JOIN nodes n ON n.id = d.node
WHERE d.day >= 0 GROUP BY n.id, n.name HAVING SUM(d.runs) > 0 ORDER BY n.name"
su postgres -c "psql -tA -F, -d tremor_fleet_check -c \"$query\"" > postgres.csv
sqlite3 -csv "$db" "$query" > sqlite.csv
if cmp -s postgres.csv sqlite.csv; then
  echo "node counts: the same in both ($(wc -l < sqlite.csv) nodes)"
else
  echo "node counts differ:"; diff postgres.csv sqlite.csv || true; status=1
fi
exit $status
