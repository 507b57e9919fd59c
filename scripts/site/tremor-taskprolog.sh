#!/bin/sh
# Slurm TaskProlog (slurm.conf: TaskProlog=<this file>; docs/slurm.md).
# slurmstepd runs it as the job's user before each task, with the task's
# environment, and adds every `export NAME=value` line it prints to it. It
# preloads Tremor into every task unless the job set TREMOR_DISABLE=1 (the
# library honours TREMOR_DISABLE as well, for a job that sets it later), and
# sends the job's files to <runs_dir>/<job id> unless the job chose a folder,
# where the epilog (tremor-epilog.sh) finds them. Settings: site.conf beside it.
site=$(dirname "$0")/site.conf
[ -r "$site" ] && . "$site"
case "${TREMOR_DISABLE:-0}" in
  0) ;;
  *) exit 0 ;;
esac
lib=${libdir:-/opt/tremor/lib}/libtremor-${flavour:-mpich}.so
case "${LD_PRELOAD:-}" in
  *"$lib"*) ;;  # already there: a step inside a batch task that has it
  "") echo "export LD_PRELOAD=$lib" ;;
  *) echo "export LD_PRELOAD=$lib $LD_PRELOAD" ;;
esac
if [ -z "${TREMOR_OUTPUT_DIR:-}" ] && [ -n "${SLURM_JOB_ID:-}" ] && [ -n "${runs_dir:-}" ]; then
  mkdir -p "$runs_dir/$SLURM_JOB_ID" 2>/dev/null && echo "export TREMOR_OUTPUT_DIR=$runs_dir/$SLURM_JOB_ID"
fi
exit 0
