#!/usr/bin/env bash
# The held-out campaign of docs/accuracy.md, in one command: every kind of
# interference, on seeds no tuning campaign used, on the bundled demo (MPICH,
# 2 ranks) and on Quantum ESPRESSO's pw.x (Open MPI, 2 ranks), which took no
# part in tuning. Run it only after the model is frozen with a tag, on a
# quiet machine: before each workload it waits until the load average is
# below 0.5 and no compiler runs (at most --wait-min minutes, then it stops
# and says so). Writes validation/heldout/<workload>/runs.csv, summary.md and
# kinds.png. Then the false-alarm check: --clean-runs clean runs of three more
# packaged applications, MOCASSIN (MPICH, 2 ranks), LAMMPS (Open MPI, 2 ranks),
# BAGEL (MPICH, 2 ranks) and Elk (Open MPI, 4 ranks on the 2 cores:
# oversubscribed), into validation/clean/<workload>/; and LAMMPS, Quantum
# ESPRESSO and BAGEL again on one rank, so that the machine's other work has
# a core of its own (the quietest set-up a 2-core machine offers), into
# validation/clean/<workload>-one-rank/. Last it refreshes the tables of
# docs/accuracy.md. --clean-only runs the false-alarm check alone.
#
# usage: validation/campaigns/heldout.sh [--tag model-freeze-4] [--runs 3] [--seed 1000]
#                                     [--clean-runs 5] [--keep DIR] [--wait-min 60] [--clean-only]
# Needs build-mpich and build-openmpi (scripts/build.sh) built from the tag,
# pw.x, mocassin, lmp, BAGEL and elk-lapw (Debian: quantum-espresso
# quantum-espresso-data mocassin lammps lammps-examples bagel elk-lapw).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tag=model-freeze-4 runs=3 seed=1000 clean_runs=5 keep="" wait_min=60 clean_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --clean-runs) clean_runs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --wait-min) wait_min=$2; shift 2 ;;
    --clean-only) clean_only=1; shift ;;
    *) echo "heldout.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$top"
# The model may not change after the freeze: a change a held-out result
# motivates needs a new tag and a new held-out campaign.
git rev-parse -q --verify "refs/tags/$tag" >/dev/null || { echo "heldout.sh: no tag $tag: freeze the model first" >&2; exit 2; }
# What the recorder measures is part of the model too (the off-CPU time, for one).
if ! git diff --quiet "$tag" -- estimators/ interpose/ counters/ segments/; then
  echo "heldout.sh: estimators/, interpose/, counters/ or segments/ differ from $tag: the model changed after its freeze" >&2
  exit 2
fi
for program in pw.x mocassin lmp BAGEL elk-lapw; do
  command -v "$program" >/dev/null || { echo "heldout.sh: $program not found (see the usage above)" >&2; exit 2; }
done
for b in build-mpich build-openmpi; do
  [ -x "$b/estimators/tremor" ] || { echo "heldout.sh: $b is not built (scripts/build.sh ${b#build-})" >&2; exit 2; }
done

wait_until_quiet() {  # load average below 0.5 and no compiler, for at most wait_min minutes
  local deadline=$(( $(date +%s) + 60 * wait_min ))
  while :; do
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    local compilers; compilers=$(pgrep -c -f '(^|/)(cc1plus|cc1|clang|clang++) ' || true)
    if awk -v l="$load" 'BEGIN { exit !(l < 0.5) }' && [ "$compilers" = 0 ]; then return 0; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "heldout.sh: the machine was not quiet for $wait_min min (load $load, $compilers compilers): not run" >&2
      exit 3
    fi
    sleep 30
  done
}

# The deck's pseudopotential comes from Debian's quantum-espresso-data.
upf=validation/campaigns/apps/qe_si/Si.pz-vbc.UPF
if [ ! -f "$upf" ]; then
  packed=/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz
  [ -f "$packed" ] || { echo "heldout.sh: $packed not found (apt-get install quantum-espresso-data)" >&2; exit 2; }
  zcat "$packed" > "$upf"
fi

kinds=clean,checkpoint,sparse,most_p0.5,most_p0.9,window,slow_rank,io_only,io_clean,clean_long,contended,contended_window
app_kinds=clean,sparse,most_p0.5,most_p0.9,window,slow_rank,io_only,contended,contended_window
apps=$top/validation/campaigns/apps
keep_args() { [ -n "$keep" ] && echo "--keep $keep/$1" || true; }

qe="$apps/run-in-deck.sh $apps/qe_si env OMP_NUM_THREADS=1 pw.x -in si.scf.in"
lammps="$apps/run-in-deck.sh /usr/share/lammps/examples/crack lmp -in in.crack -screen none -log none"
bagel="$apps/run-in-deck.sh $apps/bagel_benzene env BAGEL_NUM_THREADS=1 OMP_NUM_THREADS=1 BAGEL benzene.json"
if [ "$clean_only" = 0 ]; then
  wait_until_quiet
  /usr/bin/python3 validation/campaigns/kinds_campaign.py --build build-mpich --runs "$runs" --seed "$seed" --plot \
    --kinds "$kinds" --output validation/heldout/demo $(keep_args demo)
  wait_until_quiet
  /usr/bin/python3 validation/campaigns/kinds_campaign.py --build build-openmpi --flavour openmpi --np 2 --runs "$runs" \
    --seed "$seed" --plot --kinds "$app_kinds" --output validation/heldout/quantum-espresso $(keep_args qe) \
    --workload "quantum-espresso=$qe"
  echo "recorded with the model of $tag ($(git rev-parse --short "$tag")), injector and truth of $(git rev-parse --short HEAD), on $(date -u +%F)" > validation/heldout/README.md
fi

# No false alarms: clean runs of four more applications, one oversubscribed,
# then three of them on one rank.
clean_campaign() {  # name build flavour np workload
  wait_until_quiet
  /usr/bin/python3 validation/campaigns/kinds_campaign.py --build "$2" --flavour "$3" --np "$4" --runs "$clean_runs" \
    --kinds clean --output "validation/clean/$1" $(keep_args "clean-$1") --workload "$1=$5"
}
clean_campaign mocassin build-mpich mpich 2 "$apps/run-in-deck.sh $apps/mocassin_hii40 mocassin"
clean_campaign lammps build-openmpi openmpi 2 "$lammps"
clean_campaign bagel build-mpich mpich 2 "$bagel"
clean_campaign elk-oversubscribed build-openmpi openmpi 4 \
  "$apps/run-in-deck.sh $apps/elk_al env OMP_NUM_THREADS=1 elk-lapw"
# The same readings with a core left to the machine's other work.
clean_campaign lammps-one-rank build-openmpi openmpi 1 "$lammps"
clean_campaign quantum-espresso-one-rank build-openmpi openmpi 1 "$qe"
clean_campaign bagel-one-rank build-mpich mpich 1 "$bagel"
echo "recorded with the model of $tag ($(git rev-parse --short "$tag")), injector and truth of $(git rev-parse --short HEAD), on $(date -u +%F)" > validation/clean/README.md
/usr/bin/python3 validation/campaigns/accuracy_tables.py --update docs/accuracy.md >/dev/null
echo "held-out tables: validation/heldout/, clean runs: validation/clean/; docs/accuracy.md updated"
