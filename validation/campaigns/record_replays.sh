#!/usr/bin/env bash
# Records the replays of test/data/replays/: real runs of every kind of
# interference with the injector's logs beside each run file, which CI
# analyses again with each new build (test/campaigns/replay_check.py). The
# truth of each replay (planted delays, and the kernel's run-queue delay on
# the critical path) is in those logs, so a replay cannot be "busy": whatever
# the machine did is measured and part of its truth band.
#
# Workloads: the bundled demo (MPICH, 2 ranks) and Quantum ESPRESSO's pw.x
# (Open MPI, 2 ranks), --runs runs of each kind (validation/campaigns/
# kinds_campaign.py lists the kinds and what each plants).
#
# usage: validation/campaigns/record_replays.sh [--runs 3] [--seed 7000]
# Needs build-mpich and build-openmpi (scripts/build.sh) and pw.x
# (Debian: quantum-espresso quantum-espresso-data). Replaces test/data/replays/*/.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
runs=3 seed=7000
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "record_replays.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$top"
command -v pw.x >/dev/null || { echo "record_replays.sh: pw.x not found (apt-get install quantum-espresso)" >&2; exit 2; }
for b in build-mpich build-openmpi; do
  [ -x "$b/interpose/libtremor-${b#build-}.so" ] || { echo "record_replays.sh: $b is not built" >&2; exit 2; }
done
upf=validation/campaigns/apps/qe_si/Si.pz-vbc.UPF
if [ ! -f "$upf" ]; then
  zcat /usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz > "$upf"
fi
work=$(mktemp -d /tmp/tremor-replays-XXXXXX)
trap 'rm -rf "$work"' EXIT

demo_kinds=clean,checkpoint,sparse,most_p0.5,most_p0.9,window,slow_rank,io_only,io_clean,clean_long,contended,contended_window
app_kinds=clean,sparse,most_p0.5,most_p0.9,window,slow_rank,io_only,contended,contended_window
qe="validation/campaigns/apps/run-in-deck.sh validation/campaigns/apps/qe_si env OMP_NUM_THREADS=1 pw.x -in si.scf.in"
/usr/bin/python3 validation/campaigns/kinds_campaign.py --build build-mpich --runs "$runs" --seed "$seed" \
  --kinds "$demo_kinds" --output "$work/demo-tables" --keep "$work/demo"
/usr/bin/python3 validation/campaigns/kinds_campaign.py --build build-openmpi --flavour openmpi --np 2 --runs "$runs" \
  --seed "$seed" --kinds "$app_kinds" --output "$work/qe-tables" --keep "$work/qe" \
  --workload "quantum-espresso=$qe"

# Keep each run file and its injector logs, compressed; the campaign's own
# table goes beside them as what the recording build read (not used by the check).
pack() {  # pack KEPT_DIR WORKLOAD TABLE_DIR CAMPAIGN_NAME
  local target=test/data/replays/$2
  rm -rf "$target"
  mkdir -p "$target"
  for folder in "$1"/"$4"-*-[0-9]*; do
    local name=${folder##*/}
    name=${name#"$4"-}  # <campaign name>-<kind>-<run> -> <kind>-<run>
    mkdir -p "$target/$name"
    for file in "$folder"/*.h5 "$folder"/tremor-inject_*.csv; do
      gzip -9 -n -c "$file" > "$target/$name/${file##*/}.gz"
    done
  done
  cp "$3/runs.csv" "$target/recorded.csv"
}
pack "$work/demo" demo "$work/demo-tables" bsp_demo
pack "$work/qe" quantum-espresso "$work/qe-tables" quantum-espresso
cat > test/data/replays/README.md <<EOF
# Replays: accuracy regression data

Real runs of every kind of interference, each a run file and the injector's
logs of the same run (gzip), analysed again by CI with each build:
\`campaigns.replays\` (test/campaigns/replay_check.py) prints one table
(replay, truth band, estimate, interval, verdict) and fails when an estimate
leaves its truth band by more than the tolerance, when the 95 % intervals
meet their bands in fewer than 90 % of the replays, when a run with nothing
planted reads HIGH or above its band, or when an I/O-only run books less
than half its planted delay to file I/O.

- \`demo/\`: the bundled demo (bsp_demo), MPICH, 2 ranks: clean, checkpoint,
  sparse, most_p0.5, most_p0.9, window, slow_rank, io_only, io_clean,
  clean_long, contended, contended_window; $runs runs each.
- \`quantum-espresso/\`: Quantum ESPRESSO pw.x (validation/campaigns/apps/qe_si),
  Open MPI, 2 ranks: clean, sparse, most_p0.5, most_p0.9, window, slow_rank,
  io_only, contended, contended_window; $runs runs each.

validation/campaigns/kinds_campaign.py says what each kind plants. Each
folder \`<kind>-<run>\` holds the run file and one injector log per rank;
\`recorded.csv\` is the recording campaign's own table (what the recording
build read; the check does not use it).

**Truth band.** From the injector's logs alone
(validation/campaigns/injected_truth.py): the injected critical path plus the
bounds [low, high] of the kernel's run-queue delay on it (schedstat, logged by
the injector at every traced call). Whatever the machine did while a replay
was recorded is measured and inside its band, so no replay can be excused as
"busy".

**Tolerance.** Derived from the held-out campaigns (validation/heldout/),
never from the replays: test/campaigns/replay_tolerance.py (its docstring
has the derivation; \`/usr/bin/python3 test/campaigns/replay_tolerance.py\`
prints it).

These are regression data. Accuracy claims come from the held-out campaigns
(docs/accuracy.md), recorded apart.

## Recorded

On $(date -u '+%F %H:%M UTC'), $(nproc) cores, Linux $(uname -r), by

    validation/campaigns/record_replays.sh --runs $runs --seed $seed

at commit $(git rev-parse --short HEAD) (model and recorder: estimators/,
interpose/, counters/ and segments/ as of $(git log -1 --format=%h -- estimators interpose counters segments)).
EOF
du -sh test/data/replays
