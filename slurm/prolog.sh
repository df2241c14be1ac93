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
# The prolog runs as root: it runs only code that no one but root can change (the
# venv and package beside it, and every directory above them). Otherwise it logs why
# and lets the job run unpartitioned (SECURITY.md).
untrusted() {  # prints the first path a non-root user could change, if any
    d=$(cd "$1" && pwd)
    find "$d/.venv" "$d/grader" "$d/analysis" ! -type l \( ! -user 0 -o -perm /022 \) \
        -print -quit 2>/dev/null
    while :; do
        find "$d" -maxdepth 0 \( ! -user 0 -o \( -perm /022 ! -perm -1000 \) \) -print
        [ "$d" = / ] && break
        d=$(dirname "$d")
    done
}
bad=$(untrusted "$here/.." | head -1)
if [ -n "$bad" ]; then
  echo "$(date +%FT%T) prolog job ${SLURM_JOB_ID:-?}: refused to run gradeline as root:" \
       "$bad can be changed by a non-root user (install it root-owned, not group/other" \
       "writable; see SECURITY.md)" >> "$log"
  exit 0
fi
"$gl" cache prolog --root "$root" >> "$log" 2>&1 || echo "$(date +%FT%T) prolog job ${SLURM_JOB_ID:-?}: cache prolog failed (job runs unpartitioned)" >> "$log"
exit 0
