#!/bin/sh
# Slurm Epilog: runs as root on the job's node after each job / array task.
# Removes the job's L3 partition (resctrl group) so its ways and CLOSID return.
# Even a near no-op epilog matters: without one, slurmctld starts pending array
# tasks only every ~3 s.
# Also removes the shard cgroups a killed task left below the job's own (gradeline
# makes one per container inside Slurm's task cgroup and removes it when the task ends,
# but SIGKILL, a lost node or scancel after KillWait leave no chance): with them in
# place Slurm cannot remove the job's cgroup, and every such job leaks a cgroup tree.
# rmdir removes only cgroups without processes, so nothing alive is touched.
cg=${GRADELINE_CGROUP_ROOT:-/sys/fs/cgroup}
for job in "$cg"/*/slurm*/uid_*/job_"${SLURM_JOB_ID:-none}" "$cg"/slurm*/uid_*/job_"${SLURM_JOB_ID:-none}" \
           "$cg"/system.slice/slurmstepd.scope/job_"${SLURM_JOB_ID:-none}"; do
  [ -d "$job" ] || continue
  left=$(find "$job" -mindepth 2 -maxdepth 5 -type d -name 'gradeline-*' -print -quit 2>/dev/null)
  [ -n "$left" ] || continue
  find "$job" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null
  rmdir "$job" 2>/dev/null
done
root=${GRADELINE_RESCTRL_ROOT:-/sys/fs/resctrl}
log=${GRADELINE_CACHE_LOG:-/var/log/gradeline/cache.log}
[ -d "$root/gradeline_job_${SLURM_JOB_ID:-none}" ] || exit 0
here=$(cd "$(dirname "$0")" && pwd)
gl="$here/../.venv/bin/gradeline"; [ -x "$gl" ] || gl=gradeline
. "$here/root-check.sh"
refuse_untrusted "$here/.." epilog
"$gl" cache epilog --root "$root" >> "$log" 2>&1 || true
exit 0
