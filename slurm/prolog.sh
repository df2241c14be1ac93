#!/bin/sh
# Slurm Prolog: runs as root on the job's node before each job / array task.
# Gives the job's cores an L3 cache partition (a resctrl group sized to
# $GRADELINE_L3_MB_PER_CORE, default 2.5 MB per core; a job may ask for its own
# with --comment=l3_mb_per_core=N). It never fails: a failing prolog drains the
# node, and a job without a partition still grades correctly. Without RDT it logs
# that in one line, without starting Python.
root=${GRADELINE_RESCTRL_ROOT:-/sys/fs/resctrl}
log=${GRADELINE_CACHE_LOG:-/var/log/gradeline/cache.log}
mkdir -p "$(dirname "$log")" 2>/dev/null
if [ ! -f "$root/info/L3/cbm_mask" ]; then
  echo "$(date +%FT%T) prolog job ${SLURM_JOB_ID:-?}: runs without an L3 partition:" \
       "no resctrl L3 allocation at $root (no RDT/CAT on this hardware, or not mounted)" >> "$log"
  exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
gl="$here/../.venv/bin/gradeline"; [ -x "$gl" ] || gl=gradeline
. "$here/root-check.sh"
refuse_untrusted "$here/.." prolog
"$gl" cache prolog --root "$root" >> "$log" 2>&1 || echo "$(date +%FT%T) prolog job ${SLURM_JOB_ID:-?}: cache prolog failed (job runs unpartitioned)" >> "$log"
exit 0
