#!/usr/bin/env bash
# A private two-node Slurm cluster whose nodes do not share a network stack, for the MPI
# network measurements of bench/mpinet (root; beside the shared local cluster, never
# touching it):
#
#   glmpi-head  10.53.0.254 (bridge)  slurmctld, srun; routes to the outside host
#   glmpi-n1    10.53.0.1             slurmd m1 (core 0)   } each its own loopback, so a
#   glmpi-n2    10.53.0.2             slurmd m2 (core 1)   } stepd's PMIx server is local
#   glmpi-ext   10.99.0.2             "another host": what a rank must not reach
#
# It runs this checkout's slurm/local-cluster.sh (copied, with the node names m1/m2,
# their addresses and network namespaces substituted), state in $W/state, job ids from
# 5300000, MpiParams=ports=20000-29999 (Slurm reserves each step's ports), and every core
# shareable by two jobs (another job's ranks beside the probing one).
#
#   bench/mpinet/cluster.sh start | stop | down (stop, then remove the namespaces)
#   bench/mpinet/cluster.sh run CMD...   CMD in the head namespace with SLURM_CONF set
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
W=${GRADELINE_MPINET_DIR:-/tmp/gradeline-mpinet}
CONF=$W/state/slurm/slurm.conf

ns() { ip netns list | grep -qw "$1"; }
net_up() {
    ns glmpi-head && return 0
    ip netns add glmpi-head; ip -n glmpi-head link set lo up
    ip -n glmpi-head link add br0 type bridge
    ip -n glmpi-head addr add 10.53.0.254/24 dev br0; ip -n glmpi-head link set br0 up
    local k
    for k in 1 2; do
        ip netns add glmpi-n$k; ip -n glmpi-n$k link set lo up
        ip -n glmpi-head link add v$k type veth peer name eth0 netns glmpi-n$k
        ip -n glmpi-head link set v$k master br0; ip -n glmpi-head link set v$k up
        ip -n glmpi-n$k addr add 10.53.0.$k/24 dev eth0; ip -n glmpi-n$k link set eth0 up
        ip -n glmpi-n$k route add default via 10.53.0.254
    done
    ip netns add glmpi-ext; ip -n glmpi-ext link set lo up
    ip -n glmpi-head link add ext type veth peer name eth0 netns glmpi-ext
    ip -n glmpi-head addr add 10.99.0.1/24 dev ext; ip -n glmpi-head link set ext up
    ip -n glmpi-ext addr add 10.99.0.2/24 dev eth0; ip -n glmpi-ext link set eth0 up
    ip -n glmpi-ext route add 10.53.0.0/24 via 10.99.0.1
    ip netns exec glmpi-head sysctl -qw net.ipv4.ip_forward=1
}
net_down() {
    local n
    for n in glmpi-n1 glmpi-n2 glmpi-ext glmpi-head; do ns $n && ip netns del $n; done
    true
}

local_cluster() {  # this checkout's local-cluster.sh, adapted, in the head namespace
    rm -rf "$W/repo"; mkdir -p "$W/repo" "$W/state"; cp -r "$REPO/slurm" "$W/repo/slurm"
    local L=$W/repo/slurm/local-cluster.sh
    python3 - "$L" "$W/repo/slurm/slurm.conf.in" <<'PY'
import sys
lc, conf = sys.argv[1], sys.argv[2]
s = open(lc).read()
subs = [
    ('nodes_conf+="NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 ',
     'nodes_conf+="NodeName=m$i NodeHostname=$host NodeAddr=10.53.0.$i '),
    ('slurmctld -f "$CONF"', 'slurmctld'),            # not taken for the shared cluster's
    ('\n    refuse_other_cluster\n', '\n    : other clusters run in other namespaces\n'),
    ('then slurmd -f "$CONF" -N "$n"', 'then nsenter --net=/run/netns/glmpi-n${n#m} slurmd -f "$CONF" -N "$n"'),
]
for a, b in subs:
    if a not in s:
        sys.exit(f"cluster.sh: local-cluster.sh changed, cannot adapt: {a!r}")
    s = s.replace(a, b)
open(lc, "w").write(s)
c = open(conf).read()
c = c.replace("SlurmctldHost=@HOST@\n", "SlurmctldHost=@HOST@(10.53.0.254)\n")
c += "FirstJobId=5300000\n"
if "\nMpiParams=" not in c:
    c += "MpiParams=ports=20000-29999\n"
open(conf, "w").write(c)
PY
    nsenter --net=/run/netns/glmpi-head env GRADELINE_STATE_DIR="$W/state" "$L" "$@"
}

case "${1:-}" in
    start) [ "$(id -u)" = 0 ] || { echo "cluster.sh: run as root" >&2; exit 1; }
           net_up; local_cluster start 2 --oversubscribe 2 ;;
    stop)  if [ -f "$W/repo/slurm/local-cluster.sh" ] && ns glmpi-head; then
               nsenter --net=/run/netns/glmpi-head env GRADELINE_STATE_DIR="$W/state" \
                   "$W/repo/slurm/local-cluster.sh" stop
           fi ;;
    down)  "$0" stop; net_down ;;
    run)   shift; exec nsenter --net=/run/netns/glmpi-head env SLURM_CONF="$CONF" "$@" ;;
    *)     echo "usage: $0 start|stop|down|run CMD..." >&2; exit 2 ;;
esac
