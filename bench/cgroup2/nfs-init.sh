#!/bin/sh
# Inside the emulated node (bench/cgroup2/node.sh boots it with GRADELINE_NODE_INIT
# naming this file; `make test-nfs`): the kernel NFS server exports a tmpfs over
# loopback, two NFS 4.2 mounts of it with separate client caches (nosharecache) play
# the serving host and a compute node, and the shared-file-system tests run with the
# spool and the tickets on them. This VM's kernel has neither an NFS client nor a
# server; Debian's cloud kernel in the node has both. Prints "GL-NODE: ..." lines.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
ARGS=$(sed -n 's/.*gl_args=\([^ ]*\).*/\1/p' /proc/cmdline)
ROOT=$(sed -n 1p "$ARGS")
export PYTEST_ADDOPTS="$(sed -n 2p "$ARGS")"
# GRADELINE_NODE_* settings from the host (node.sh passes them on)
eval "$(sed -n '4,$p' "$ARGS" | grep '^GRADELINE_NODE_[A-Z_]*=[A-Za-z0-9._-]*$' | sed 's/^/export /')"
mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
hostname gl-node
echo "127.0.0.1 gl-node" >> /etc/hosts  # no DNS here: munge and Slurm look the name up
ip link set lo up 2>/dev/null
# The node has no network but loopback, and glibc's getaddrinfo(AI_ADDRCONFIG), which
# Slurm uses, finds no IPv4 name while no non-loopback IPv4 address exists: one on lo.
ip addr add 10.99.0.1/32 dev lo 2>/dev/null
say() { echo "GL-NODE: $*"; }
say "kernel $(uname -r)"
cd "$ROOT" || { say "no checkout at $ROOT"; poweroff -f; }

# The server: nfsd over a tmpfs (an overlay cannot be exported), NFSv4 only, a short
# grace period (a fresh server holds no state to recover).
for m in nfsd nfsv4; do modprobe "$m" || say "modprobe $m failed"; done
mount -t nfsd nfsd /proc/fs/nfsd
echo 10 > /proc/fs/nfsd/nfsv4gracetime 2>/dev/null
echo 10 > /proc/fs/nfsd/nfsv4leasetime 2>/dev/null
mkdir -p /srv/nfs /var/lib/nfs/v4recovery /run/rpcbind
mount -t tmpfs -o size=2g,mode=755 tmpfs /srv/nfs
# the export is NFSv4's root (fsid=0): clients mount 127.0.0.1:/
echo "/srv/nfs 127.0.0.1(rw,sync,no_subtree_check,no_root_squash,fsid=0)" > /etc/exports
rpcbind -w 2>/dev/null || true
exportfs -ra || say "exportfs failed"
rpc.mountd -N 3 || say "rpc.mountd failed"
rpc.nfsd -N 3 2 || say "rpc.nfsd failed"
say "exported: $(exportfs -v 2>&1 | tr -s ' \n\t' ' ')"
mkdir -p /mnt/a /mnt/b
ok=1
for m in a b; do
    mount -t nfs4 -o vers=4.2,nosharecache,hard,timeo=600 127.0.0.1:/ /mnt/$m \
        || { say "mount /mnt/$m failed"; ok=0; }
done
say "mounts: $(grep ' /mnt/[ab] ' /proc/mounts | cut -d' ' -f2,3,4 | tr '\n' ';')"

ENV="PYTHONDONTWRITEBYTECODE=1 GRADELINE_SHARED_DIRS=/mnt/a:/mnt/b"
if [ "${GRADELINE_NODE_TESTS:-1}" = 1 ]; then   # 0: the soak stage alone
    t0=$(date +%s)
    env $ENV HOME=/root "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider \
        --tb=short tests/sharedfs > /tmp/sharedfs.out 2>&1
    rc=$?
    cat /tmp/sharedfs.out
    say "shared-fs tests over NFS 4.2, two mounts: rc=$rc in $(( $(date +%s) - t0 )) s:" \
        "$(tail -1 /tmp/sharedfs.out)"
    [ "$rc" = 0 ] || ok=0
fi

# The soak with the spool on NFS: serve, the pilots of a two-node local Slurm and the
# five faults (slurmd killed, PostgreSQL crashed, serve killed, a node lost, the
# spool's file system full), under bubblewrap. Small: every instruction is emulated.
# Off unless GRADELINE_NODE_SOAK=1 (minutes more under emulation: see bench/results/nfs).
if [ "${GRADELINE_NODE_SOAK:-0}" = 1 ]; then
    # The guest's root is the host's under an overlay: its own state directory, so
    # neither the host's pid files nor its database directory are taken for the node's.
    export GRADELINE_RUNTIME=bwrap HOME=/root GRADELINE_STATE_DIR=/var/tmp/gl-node-state \
        GRADELINE_IMAGE_DIR=/var/lib/gradeline/images
    t0=$(date +%s)
    say "soak: starting the local Slurm cluster"
    timeout 300 bash -x slurm/local-cluster.sh start 2 > /tmp/cluster.out 2>&1
    crc=$?
    say "soak: cluster: rc=$crc $(tail -1 /tmp/cluster.out)"
    if [ "$crc" != 0 ]; then    # what the script did last, and munged's own word
        tail -12 /tmp/cluster.out; tail -5 /var/log/munge/munged.log 2>/dev/null
        tail -n 12 "$GRADELINE_STATE_DIR"/slurm/slurmd-n1.log \
            "$GRADELINE_STATE_DIR"/slurm/slurmctld.log 2>/dev/null
    fi
    say "soak: database: $(timeout 300 "$ROOT/.venv/bin/gradeline" db start 2>&1 | tail -1)"
    # (its lines reach the console as they come: a soak under emulation is long)
    ( "$ROOT/.venv/bin/python" -u bench/soak.py --nfs /srv/nfs \
        --count "${GRADELINE_NODE_SOAK_COUNT:-60}" --rate "${GRADELINE_NODE_SOAK_RATE:-1}" \
        --work /var/tmp/gl-soak --out /tmp/soak-out; echo $? > /tmp/soak.rc ) 2>&1 | tee /tmp/soak.out
    rc=$(cat /tmp/soak.rc)
    [ "$rc" = 0 ] || tail -40 /var/tmp/gl-soak/serve.log
    say "soak over NFS: rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/soak.out)"
    [ "$rc" = 0 ] || ok=0
fi
if [ "$ok" = 1 ]; then say "all passed"; fi
sync
poweroff -f
