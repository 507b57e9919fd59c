#!/bin/sh
# Slurm Epilog or EpilogSlurmctld (slurm.conf: Epilog=<this file>, or
# EpilogSlurmctld= to index once per job on the controller; docs/slurm.md).
# Runs as root after the job with SLURM_JOB_ID set, and indexes the job's
# Tremor files (<runs_dir>/<job id>, where tremor-taskprolog.sh sent them)
# into the site's fleet database: `tremor fleet` then keys the run by
# slurm:<job id>. It always exits 0: a failing Epilog drains the node; what
# went wrong goes to epilog_log. Settings: site.conf beside it.
site=$(dirname "$0")/site.conf
[ -r "$site" ] && . "$site"
job=${SLURM_JOB_ID:-}
folder=${runs_dir:-/shared/tremor/runs}/$job
# No job id, or no Tremor files: TREMOR_DISABLE=1, or no MPI program ran.
[ -n "$job" ] && [ -d "$folder" ] || exit 0
log=${epilog_log:-/dev/null}
"${tremor:-/opt/tremor/bin/tremor}" fleet index "$folder" --db "${fleet_db:-/shared/tremor/fleet.db}" >>"$log" 2>&1
status=$?
[ "$status" -eq 0 ] || echo "tremor-epilog: job $job: tremor fleet index $folder exited $status" >>"$log"
exit 0
