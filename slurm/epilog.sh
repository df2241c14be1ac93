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
. "$here/root-check.sh"
refuse_untrusted "$here/.." epilog
"$gl" cache epilog --root "$root" >> "$log" 2>&1 || true
exit 0
