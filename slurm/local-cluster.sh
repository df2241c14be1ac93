#!/usr/bin/env bash
# A one-node (or N fake-node) local Slurm cluster without systemd, for development,
# tests and the demo. On a real cluster none of this runs: the site's Slurm is used.
#
#   slurm/local-cluster.sh start [NODES] [--accounting] [--oversubscribe K] [--gpu]
#                                          install if missing, write slurm.conf, start
#                                          munge, slurmctld, slurmd; wait until idle.
#                                          --accounting: also MariaDB and slurmdbd, the
#                                          multifactor priority (fair share, QOS) and
#                                          enforced associations, as a site runs it
#                                          --oversubscribe K: up to K jobs share each
#                                          core (memory per CPU divided by K): many
#                                          pilots on few cores, for measuring the
#                                          control plane (bench/control_plane.py)
#                                          --gpu: the first node has a GPU (GRES gpu:1,
#                                          gpu_generic on /dev/null: scheduling only)
#   slurm/local-cluster.sh stop            stop the daemons, clean stale pid files
#   slurm/local-cluster.sh status          what runs; the SLURM_CONF to export
#   slurm/local-cluster.sh conf            print the SLURM_CONF path
#
# Idempotent: start on a running cluster only checks it. State lives in
# $GRADELINE_STATE_DIR/slurm (default /var/lib/gradeline/slurm); the config is
# $STATE/slurm.conf, so a site /etc/slurm/slurm.conf is never touched.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
STATE=${GRADELINE_STATE_DIR:-/var/lib/gradeline}/slurm
CONF=$STATE/slurm.conf
export SLURM_CONF=$CONF
NODES=${GRADELINE_SLURM_NODES:-1}
ACCOUNTING=${GRADELINE_SLURM_ACCOUNTING:-0}
SHARE=${GRADELINE_SLURM_OVERSUBSCRIBE:-1}
GPU=${GRADELINE_SLURM_GPU:-0}
args=("${@:2}")
for ((i = 0; i < ${#args[@]}; i++)); do
    a=${args[i]}
    case "$a" in
        --accounting) ACCOUNTING=1 ;;
        --oversubscribe) i=$((i + 1)); SHARE=${args[i]:-} ;;
        --gpu) GPU=1 ;;
        [0-9]*) NODES=$a ;;
        *) echo "local-cluster: unknown argument $a" >&2; exit 2 ;;
    esac
done
[[ "$SHARE" =~ ^[1-9][0-9]*$ ]] || { echo "local-cluster: --oversubscribe wants a count" >&2; exit 2; }
DBD_PORT=${GRADELINE_SLURMDBD_PORT:-6819}
MARIADB_PORT=${GRADELINE_MARIADB_PORT:-3307}

die() { echo "local-cluster: $*" >&2; exit 1; }
# A pid file outlives its daemon (a reboot, a node image that shares this state
# directory): the pid counts only if it is still one of our daemons, never some
# other process that got the same number.
alive() {
    local pid
    [ -f "$1" ] && pid=$(cat "$1") && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    case "$(cat "/proc/$pid/comm" 2>/dev/null)" in
        slurmctld|slurmd|slurmdbd|mariadbd|mysqld) return 0 ;;
        *) return 1 ;;
    esac
}

install_packages() {
    # libpmix-dev: Slurm's PMIx plugin (srun --mpi=pmix, MPI ranks) dlopens the
    # unversioned libpmix.so, which only the -dev package provides
    local missing="" wanted="slurmctld slurmd slurm-client munge libpmix-dev"
    [ "$ACCOUNTING" = 1 ] && wanted="$wanted slurmdbd mariadb-server"
    for p in $wanted; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    [ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root: apt-get install$missing)"
    echo "installing:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

write_conf() {
    mkdir -p "$STATE/ctld"
    local host cpus mem line nodes_conf="" i port
    host=$(hostname -s)
    line=$(slurmd -C | head -1)
    cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$line")
    mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$line")
    mem=$(( mem * 3 / 4 ))                      # leave room for the OS and the database
    if [ "$NODES" -le 1 ]; then
        nodes_conf="${line%%RealMemory=*}RealMemory=$mem State=UNKNOWN"
        nodes_conf="NodeName=$host ${nodes_conf#NodeName=* }"
    else
        # Several slurmd on one machine: each fake node owns one core. CpuSpecList
        # reserves the other cores, so tasks of n$i are pinned to core i-1.
        [ "$NODES" -le "$cpus" ] || die "$NODES nodes need $NODES cores; this machine has $cpus"
        local hw=${line#NodeName=* }
        hw=${hw%%RealMemory=*}                  # "CPUs=.. Boards=.. ... ThreadsPerCore=.. "
        for i in $(seq 1 "$NODES"); do
            port=$(( 17000 + i ))
            spec=$(seq 0 $(( cpus - 1 )) | grep -vx $(( i - 1 )) | paste -sd, -)
            nodes_conf+="NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$port "
            nodes_conf+="${hw}RealMemory=$(( mem / NODES )) CpuSpecList=$spec State=UNKNOWN"
            nodes_conf+=$'\n'
        done
    fi
    local task=task/affinity proctrack=proctrack/linuxproc plugin=() c
    if grep -q '^cgroup [^ ]* cgroup .*memory' /proc/mounts; then  # cgroup v1 with memory
        plugin=("CgroupPlugin=cgroup/v1" "CgroupMountpoint=/sys/fs/cgroup")
    elif [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] && \
            grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        # cgroup v2 (a unified hierarchy with memory): Slurm's cgroup/v2 plugin, without
        # systemd (no dbus here: slurmd makes its own scope in system.slice, and the
        # controllers the task plugin needs are enabled down to it, as systemd would on
        # a booted host; without them task/cgroup cannot create a step's context)
        plugin=("CgroupPlugin=cgroup/v2" "IgnoreSystemd=yes")
        mkdir -p /sys/fs/cgroup/system.slice
        for c in cpuset cpu memory pids; do
            echo "+$c" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
            echo "+$c" > /sys/fs/cgroup/system.slice/cgroup.subtree_control 2>/dev/null || true
        done
    else
        echo "local-cluster: no cgroup memory controller here: tasks are pinned, not" \
             "confined (task/affinity)" >&2
    fi
    if [ ${#plugin[@]} -gt 0 ]; then  # confine each task's cores and memory by cgroup
        task=task/cgroup,task/affinity proctrack=proctrack/cgroup
        printf '%s\n' "# written by slurm/local-cluster.sh" "${plugin[@]}" "ConstrainCores=yes" \
            "ConstrainRAMSpace=yes" "ConstrainSwapSpace=no" > "$STATE/cgroup.conf.tmp"
        cmp -s "$STATE/cgroup.conf" "$STATE/cgroup.conf.tmp" || stop_daemons
        mv "$STATE/cgroup.conf.tmp" "$STATE/cgroup.conf"
    fi
    sed -e "s|@HOST@|$host|" -e "s|@STATE@|$STATE|g" -e "s|@REPO@|$REPO|g" \
        -e "s|@TASK_PLUGIN@|$task|" -e "s|@PROCTRACK@|$proctrack|" \
        -e "s|@CTLD_PORT@|${GRADELINE_SLURMCTLD_PORT:-6817}|" \
        -e "s|@SLURMD_PORT@|${GRADELINE_SLURMD_PORT:-6818}|" \
        -e "s|@MEM_PER_CPU@|$(( mem / cpus / 2 / SHARE ))|" \
        -e "s|@OVERSUBSCRIBE@|$([ "$SHARE" -gt 1 ] && echo "FORCE:$SHARE" || echo NO)|" \
        "$REPO/slurm/slurm.conf.in" > "$CONF.tmp"
    local acct=""
    [ "$ACCOUNTING" = 1 ] && acct=$(sed -e "s|@DBD_PORT@|$DBD_PORT|" \
        "$REPO/slurm/accounting.conf.in")
    # A GPU (GRES) on the first node, for scheduling tests: Debian's Slurm has only
    # gpu_generic, which needs a device file; /dev/null stands in for one (a missing file
    # stops slurmd), and the job gets SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES as for a GPU.
    if [ "$GPU" = 1 ]; then
        local first; first=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$nodes_conf" | head -1)
        nodes_conf=$(sed "0,/^NodeName=$first /s//NodeName=$first Gres=gpu:1 /" <<<"$nodes_conf")
        printf '%s\n' "# written by slurm/local-cluster.sh" \
            "NodeName=$first Name=gpu File=/dev/null" > "$STATE/gres.conf"
    else
        rm -f "$STATE/gres.conf"
    fi
    python3 - "$CONF.tmp" "$nodes_conf" "$acct" "$GPU" <<'PY'
import sys
p, nodes, acct, gpu = sys.argv[1], sys.argv[2].strip(), sys.argv[3].strip(), sys.argv[4]
text = open(p).read().replace("@NODES@", nodes)
if gpu == "1":
    text = text.replace("ClusterName=gradeline\n", "ClusterName=gradeline\nGresTypes=gpu\n")
if acct:  # accounting replaces the completion log
    text = text.replace("JobCompType=jobcomp/filetxt", "JobCompType=jobcomp/none")
    text += acct + "\n"
open(p, "w").write(text)
PY
    # Per-node task environment (TaskProlog): KEY=VALUE lines in node-env/<node> are
    # exported into every task on that node -- how a test makes one node's runtime
    # differ from the others' (a broken Apptainer, another image directory).
    mkdir -p "$STATE/node-env"
    chmod 755 "$STATE/node-env"
    printf '%s\n' '#!/bin/sh' \
        "f=\"$STATE/node-env/\$SLURMD_NODENAME\"" \
        '[ -r "$f" ] || exit 0' \
        'while IFS= read -r line; do case "$line" in *=*) echo "export $line";; esac; done < "$f"' \
        > "$STATE/task-prolog.sh"
    chmod 755 "$STATE/task-prolog.sh"
    # A changed config needs a restart of the daemons.
    if [ -f "$CONF" ] && ! cmp -s "$CONF" "$CONF.tmp"; then stop_daemons; fi
    mv "$CONF.tmp" "$CONF"
    touch "$STATE/jobcomp.log"
}

# -- accounting: MariaDB (TCP on 127.0.0.1 only) and slurmdbd, state under $STATE -------
start_accounting() {
    local db=$STATE/mariadb/data run=$STATE/mariadb i   # run: the server's socket, pid, log
    if ! alive "$run/mariadb.pid"; then
        mkdir -p "$run"; chown mysql:mysql "$run"; rm -f "$run/mariadb.pid"
        if [ ! -d "$db/mysql" ]; then
            mkdir -p "$db"; chown mysql:mysql "$db"
            mariadb-install-db --user=mysql --datadir="$db" --skip-test-db >"$run/install.log" 2>&1 \
                || die "mariadb-install-db failed: see $run/install.log"
        fi
        runuser -u mysql -- mariadbd --datadir="$db" --bind-address=127.0.0.1 \
            --port="$MARIADB_PORT" --socket="$run/mariadb.sock" --pid-file="$run/mariadb.pid" \
            --log-error="$run/mariadb.log" --innodb-buffer-pool-size=64M >/dev/null 2>&1 &
        for i in $(seq 1 120); do
            mariadb --socket="$run/mariadb.sock" -e 'select 1' >/dev/null 2>&1 && break
            sleep 0.5
        done
        mariadb --socket="$run/mariadb.sock" -e 'select 1' >/dev/null 2>&1 || \
            die "MariaDB did not start: see $run/mariadb.log"
    fi
    [ -f "$STATE/slurmdbd.pass" ] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' \
        > "$STATE/slurmdbd.pass")
    local pass; pass=$(cat "$STATE/slurmdbd.pass")
    mariadb --socket="$run/mariadb.sock" <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
SQL
    (umask 077; printf '%s\n' "# written by slurm/local-cluster.sh" "AuthType=auth/munge" \
        "DbdHost=localhost" "DbdPort=$DBD_PORT" "SlurmUser=root" \
        "PidFile=$STATE/slurmdbd.pid" "LogFile=$STATE/slurmdbd.log" \
        "StorageType=accounting_storage/mysql" "StorageHost=127.0.0.1" \
        "StoragePort=$MARIADB_PORT" "StorageUser=slurm" "StoragePass=$pass" \
        "StorageLoc=slurm_acct_db" > "$STATE/slurmdbd.conf")
    if ! alive "$STATE/slurmdbd.pid"; then
        rm -f "$STATE/slurmdbd.pid"
        slurmdbd
        for i in $(seq 1 60); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
    fi
    # The cluster, and an account every local user may charge by default (associations
    # are enforced, as on a site); a course's account is the admin's: docs/pages/admin.
    sacctmgr -n -i add cluster gradeline >/dev/null 2>&1 || true
    sacctmgr -n -i add account gradeline Description="local default" Organization=local \
        >/dev/null 2>&1 || true
    local u
    for u in root ${GRADELINE_SLURM_USERS:-gradeline-ci}; do
        id "$u" >/dev/null 2>&1 || continue
        sacctmgr -n list user "$u" format=user | grep -q . || \
            sacctmgr -n -i add user "$u" DefaultAccount=gradeline >/dev/null
    done
}

stop_accounting() {
    local f
    for f in "$STATE/slurmdbd.pid" "$STATE/mariadb/mariadb.pid"; do
        if alive "$f"; then
            kill "$(cat "$f")" 2>/dev/null || true
            for _ in $(seq 1 100); do alive "$f" || break; sleep 0.2; done
        fi
        rm -f "$f"
    done
}

node_names() { sed -n 's/^NodeName=\([^ ]*\).*/\1/p' "$CONF"; }

start_munge() {
    if pgrep -x munged >/dev/null; then return 0; fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
    [ -f /etc/munge/munge.key ] || { /usr/sbin/mungekey --create 2>/dev/null || \
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; }
    chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
    rm -f /run/munge/munged.pid
    runuser -u munge -- /usr/sbin/munged
}

# A controller of another state directory (another checkout's or CI's cluster) holds the
# ports: say which and how to stop it, rather than fail later with a bind error.
refuse_other_cluster() {
    local pid conf
    for pid in $(pgrep -x slurmctld 2>/dev/null); do
        conf=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | sed -n '/^-f$/{n;p;q}')
        [ -n "$conf" ] && [ "$conf" != "$CONF" ] || continue
        die "another local cluster runs (slurmctld $pid, $conf): stop it first with" \
            "GRADELINE_STATE_DIR=$(dirname "$(dirname "$conf")") $0 stop"
    done
}

start_daemons() {
    refuse_other_cluster
    if ! alive "$STATE/slurmctld.pid"; then
        rm -f "$STATE/slurmctld.pid"
        slurmctld -f "$CONF"
    fi
    local n
    for n in $(node_names); do
        if ! alive "$STATE/slurmd-$n.pid"; then
            rm -f "$STATE/slurmd-$n.pid"
            mkdir -p "$STATE/slurmd-$n"     # its spool (a fresh state directory has none)
            # its TmpFS (slurm.conf: TmpFS=$STATE/tmp-%n), where the PMIx plugin makes each
            # step's client directory spmix_appdir_<uid>_<job>.<step>: one /tmp for every
            # fake node fails the second node's MPI step with "pmixp_mkdir ... File exists"
            mkdir -p "$STATE/tmp-$n"; chmod 1777 "$STATE/tmp-$n"
            if [ "$(node_names | wc -l)" -gt 1 ]; then slurmd -f "$CONF" -N "$n"; else slurmd -f "$CONF"; fi
        fi
    done
}

wait_idle() {
    local i state
    for i in $(seq 1 120); do
        state=$(sinfo -h -o '%t' 2>/dev/null | sort -u | paste -sd, - || true)
        case "$state" in
            idle|idle,mix|mix|alloc|mix,idle) return 0 ;;
            *down*|*drain*|*unk*)
                scontrol update nodename="$(node_names | paste -sd, -)" state=resume >/dev/null 2>&1 || true ;;
        esac
        sleep 0.5
    done
    die "nodes not idle after 60 s (state: ${state:-none}); see $STATE/slurmctld.log"
}

stop_daemons() {
    local f
    for f in "$STATE"/slurmd-*.pid "$STATE/slurmctld.pid"; do
        [ -f "$f" ] || continue
        if alive "$f"; then kill "$(cat "$f")" 2>/dev/null || true; fi
    done
    for _ in $(seq 1 50); do
        local any=0
        for f in "$STATE"/slurmd-*.pid "$STATE/slurmctld.pid"; do alive "$f" && any=1; done
        [ $any = 0 ] && break
        sleep 0.2
    done
    rm -f "$STATE"/slurmd-*.pid "$STATE/slurmctld.pid" /run/slurmctld.pid /run/slurmd.pid
}

case "${1:-status}" in
    start)
        [ "$(id -u)" = 0 ] || die "the local cluster runs its daemons as root; use sudo"
        install_packages
        write_conf
        start_munge
        if [ "$ACCOUNTING" = 1 ]; then start_accounting; else stop_accounting; fi
        start_daemons
        wait_idle
        echo "local Slurm cluster up: $(sinfo -h -o '%D node(s), %c cpus/node, %t' | head -1); export SLURM_CONF=$CONF"
        ;;
    stop)
        stop_daemons
        stop_accounting
        echo "local Slurm cluster stopped"
        ;;
    status)
        [ -f "$CONF" ] || { echo "not configured"; exit 1; }
        alive "$STATE/slurmctld.pid" || { echo "slurmctld not running"; exit 1; }
        sinfo; echo "export SLURM_CONF=$CONF"
        ;;
    conf)
        echo "$CONF"
        ;;
    *)
        die "usage: $0 start [NODES] [--accounting] [--oversubscribe K]|stop|status|conf"
        ;;
esac
