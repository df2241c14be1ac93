#!/bin/bash
# One srun task = one MPI rank in a sandbox, the way gradeline would start it:
#   srun --mpi=pmix --resv-ports=4 -N2 -n2 env RT=... CONF=... bench/mpinet/rank.sh
# RT      none | bwrap | apptainer | pasta (a network namespace per rank, user only)
# CONF    glnet's flags ("" = no confinement, "-L", "-B", "-L_-B": _ for a space)
# CGNFT=1 root only: the rank's sockets filtered by its cgroup v2 (nftables)
# PEERS   the step's nodes' addresses on the MPI network (default both test nodes)
# Ports: the step's reservation (SLURM_STEP_RESV_PORTS, slurm.conf MpiParams=ports=).
set -u
W=${GRADELINE_MPINET_DIR:-/tmp/gradeline-mpinet}
B=$W/bin                                   # glnet, mpiprobe, hostile (matrix.sh builds them)
IMG=${GRADELINE_MPI_ROOTFS:?root directory of a grading image with Open MPI}
SIF=${GRADELINE_MPI_SIF:?SIF of a grading image with Open MPI}
PEERS=${PEERS:-10.53.0.1 10.53.0.2}
lo=${SLURM_STEP_RESV_PORTS%-*}; hi=${SLURM_STEP_RESV_PORTS#*-}
# Open MPI over TCP only (shared memory between ranks of one node fails across PID
# namespaces, see README), on the MPI network, in the step's ports; PMIx without the
# stepd's shared-memory store (the host's spool stays hidden), Open MPI's session
# directories in the rank's private /tmp.
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=${MPINET:-10.53.0.0/24} \
       OMPI_MCA_btl_tcp_port_min_v4=$lo OMPI_MCA_btl_tcp_port_range_v4=$((hi - lo + 1)) \
       OMPI_MCA_btl_tcp_port_min_v6=$lo OMPI_MCA_btl_tcp_port_range_v6=$((hi - lo + 1)) \
       PMIX_MCA_gds=hash PMIX_SERVER_TMPDIR=/tmp OMPI_MCA_orte_top_session_dir=/tmp
[ "$SLURM_PROCID" = 0 ] && echo "ports $SLURM_STEP_RESV_PORTS on $SLURMD_NODENAME job $SLURM_JOB_ID" >&2
pport=${PMIX_SERVER_URI41##*:}
net=()
if [ -n "${CONF:-}" ]; then
    net=(/mnt/glnet ${CONF//_/ } -r "$lo-$hi")
    for p in $PEERS; do net+=(-a "$p"); done
    net+=(--)
fi
passed() { compgen -e | grep -E '^(PMIX|OMPI|SLURM|PROBE|HOLD)'; }

if [ -n "${CGNFT:-}" ]; then
    v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
    rel=glmpi/j${SLURM_JOB_ID}r$SLURM_PROCID ch=j${SLURM_JOB_ID}r$SLURM_PROCID
    mkdir -p "$v2/$rel"
    nft -f - <<NFT || { echo "rank.sh: nft failed" >&2; exit 125; }
table inet glmpi {
  chain out { type filter hook output priority 0; policy accept; }
  chain $ch {
    ct state established,related accept
    oif "lo" ip daddr 127.0.0.1 tcp dport $pport accept
    ip daddr { ${PEERS// /, } } tcp dport $lo-$hi accept
    meta l4proto tcp reject with tcp reset
    reject
  }
}
add rule inet glmpi out socket cgroupv2 level 2 "${v2#/sys/fs/cgroup/}/$rel" jump $ch
NFT
    echo $$ > "$v2/$rel/cgroup.procs"
fi

bwrap_rank() {  # the image read-only, nothing of the host but the test binaries
    local envs=() v
    while IFS= read -r v; do envs+=(--setenv "$v" "${!v}"); done < <(passed)
    # HOME: PMIx 4.2.2 crashes in PMIx_Init without it when the uid has no passwd entry
    exec bwrap --ro-bind "$IMG" / --ro-bind "$B" /mnt --proc /proc --dev /dev --tmpfs /tmp \
        "$@" --die-with-parent --new-session --clearenv "${envs[@]}" \
        --setenv PATH /usr/bin:/bin --setenv HOME /tmp "${net[@]}" /mnt/${PROG:-mpiprobe} ${ARGS:-}
}

case "${RT:-none}" in
  none)
    exec "${net[@]/#\/mnt/$B}" "$B/${PROG:-mpiprobe}" ${ARGS:-} ;;
  bwrap)
    bwrap_rank --unshare-all --share-net ;;
  apptainer)
    while IFS= read -r v; do export "APPTAINERENV_$v=${!v}"; done < <(passed)
    exec apptainer -s exec --containall --no-home --no-mount cwd --pwd / --bind "$B:/mnt" \
        "$SIF" "${net[@]}" /mnt/${PROG:-mpiprobe} ${ARGS:-} ;;
  pasta)
    # A network namespace per rank: pasta forwards the step's ports on this node's MPI
    # address into it (-t) and the stepd's PMIx port out of it (-T, spliced to the
    # node's loopback); nftables inside (pasta makes us root of its user namespace)
    # drops the rest; the rank runs in a nested user namespace as the job's uid again
    # (the PMIx server checks it), without CAP_NET_ADMIN over that network namespace.
    me=$(ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1)
    rules=$(mktemp)                        # removed by the shell that loads it
    cat > "$rules" <<NFT
table inet gl {
  chain out {
    type filter hook output priority 0; policy drop;
    ct state established,related accept
    oif "lo" ip daddr 127.0.0.1 tcp dport $pport accept
    ip daddr { ${PEERS// /, } } tcp dport $lo-$hi accept
    meta l4proto tcp reject with tcp reset
    reject
  }
}
NFT
    envs=()
    while IFS= read -r v; do envs+=(--setenv "$v" "${!v}"); done < <(passed)
    exec pasta -f -q --config-net -a "$me" -n 24 -g 10.53.0.254 -i eth0 --no-map-gw \
        -t "$me/$lo-$hi" -u none -T "$pport" -U none -- \
        sh -c 'nft -f "$0" || exit 125; rm -f "$0"; exec "$@"' "$rules" \
        bwrap --ro-bind "$IMG" / --ro-bind "$B" /mnt --proc /proc --dev /dev --tmpfs /tmp \
        --unshare-user --uid "$(id -u)" --gid "$(id -g)" --unshare-pid --unshare-ipc \
        --unshare-uts --die-with-parent --new-session --clearenv "${envs[@]}" \
        --setenv PATH /usr/bin:/bin --setenv HOME /tmp "${net[@]}" /mnt/${PROG:-mpiprobe} ${ARGS:-} \
        2> >(grep -v 'syslog' >&2) ;;
  *) echo "rank.sh: RT=$RT?" >&2; exit 2 ;;
esac
