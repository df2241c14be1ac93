#!/bin/sh
# Slurm Epilog: runs as root on the job's node after each job / array task.
# Removes the job's L3 partition (resctrl group) so its ways and CLOSID return.
# Even a near no-op epilog matters: without one, slurmctld starts pending array
# tasks only every ~3 s.
root=${GRADELINE_RESCTRL_ROOT:-/sys/fs/resctrl}
log=${GRADELINE_CACHE_LOG:-/var/log/gradeline/cache.log}
[ -d "$root/gradeline_job_${SLURM_JOB_ID:-none}" ] || exit 0
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
  echo "$(date +%FT%T) epilog job ${SLURM_JOB_ID:-?}: refused to run gradeline as root:" \
       "$bad can be changed by a non-root user (install it root-owned, not group/other" \
       "writable; see SECURITY.md)" >> "$log"
  exit 0
fi
"$gl" cache epilog --root "$root" >> "$log" 2>&1 || true
exit 0
