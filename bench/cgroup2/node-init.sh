#!/bin/sh
# Inside the cgroup v2 node (bench/cgroup2/node.sh boots it): PID 1 after the switch
# to this machine's own file system (read-only, under a tmpfs overlay). Runs the
# sandbox contract and the hostile corpus under each runtime (bubblewrap and
# Apptainer), as root and as an ordinary user in a delegated subtree, prints
# "GL-NODE: ..." lines, and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
ARGS=$(sed -n 's/.*gl_args=\([^ ]*\).*/\1/p' /proc/cmdline)
ROOT=$(sed -n 1p "$ARGS")
export PYTEST_ADDOPTS="$(sed -n 2p "$ARGS")"  # e.g. -k 'memory or fork'
RUNTIMES="$(sed -n 3p "$ARGS")"
RUNTIMES=${RUNTIMES:-bwrap apptainer}
# GRADELINE_NODE_MODES (from node.sh's environment): "root user" (default), or one
MODES=$(sed -n 's/^GRADELINE_NODE_MODES=//p' "$ARGS")
MODES=${MODES:-root user}

mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# what udev makes on a booted system, and Apptainer needs ("lstat /dev/fd")
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# /dev/fuse as udev leaves it (0666): Apptainer as an ordinary user mounts its SIF
# with squashfuse through it
[ -e /dev/fuse ] && chmod 0666 /dev/fuse
for i in 0:stdin 1:stdout 2:stderr; do [ -e /dev/${i#*:} ] || ln -s /proc/self/fd/${i%%:*} /dev/${i#*:}; done
mount -t tmpfs -o mode=1777 tmpfs /tmp
hostname gl-node
ip link set lo up 2>/dev/null
say() { echo "GL-NODE: $*"; }
say "kernel $(uname -r); cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
cd "$ROOT" || { say "no checkout at $ROOT"; poweroff -f; }
TESTS="tests/contract tests/integration/test_hostile.py"
# emulated: ~15x slower than this machine, so time limits in the tests stretch by 10
ENV0="GRADELINE_REQUIRE_SANDBOX=1 PYTHONDONTWRITEBYTECODE=1 GRADELINE_TEST_SLOWDOWN=${GRADELINE_TEST_SLOWDOWN:-10}"

# The ordinary user: its processes start in a cgroup delegated to it (what
#    `systemd-run --user -p Delegate=yes` gives): the cgroup and its control files
#    belong to the user, the controllers are enabled above it.
USER=gradeline-ci
id "$USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$USER"
echo "+cpu +cpuset +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control
SCRATCH=/var/tmp/gl-user && mkdir -p "$SCRATCH" && chown "$USER" "$SCRATCH"
as_user() {  # NAME CMD...: CMD as the user, in a new cgroup NAME delegated to it
    D=/sys/fs/cgroup/$1
    shift
    mkdir "$D"
    chown "$USER" "$D" "$D/cgroup.procs" "$D/cgroup.subtree_control" "$D/cgroup.threads"
    sh -c 'echo $$ > "$1" && shift && exec "$@"' sh "$D/cgroup.procs" \
        setpriv --reuid="$USER" --regid="$USER" --init-groups \
        env -i $ENV HOME="/home/$USER" USER="$USER" PATH="$PATH" LC_ALL=C.UTF-8 \
        GRADELINE_STATE_DIR="$SCRATCH/state" GRADELINE_IMAGE_DIR=/var/lib/gradeline/images \
        PYTEST_ADDOPTS="$PYTEST_ADDOPTS" "$@"
}
ok=1
n=0
for RT in $RUNTIMES; do
    ENV="$ENV0 GRADELINE_RUNTIME=$RT"
    # As root, in the root cgroup; then as the user, in a delegated subtree.
    rc_root=0
    rc_user=0
    case " $MODES " in *" root "*)
    say "$RT, root: $("$ROOT/.venv/bin/gradeline" check-env 2>&1 | grep 'limit: memory')"
    t0=$(date +%s)
    env $ENV HOME=/root "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider --tb=short $TESTS \
        > /tmp/root-$RT.out 2>&1
    rc_root=$?
    cat /tmp/root-$RT.out
    say "$RT, root: rc=$rc_root in $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/root-$RT.out)"
    esac

    case " $MODES " in *" user "*)
    say "$RT, user: $(as_user gl-check-$RT "$ROOT/.venv/bin/gradeline" check-env 2>&1 | grep 'limit: memory')"
    t0=$(date +%s)
    as_user gl-delegated-$RT "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider --tb=short $TESTS \
        > /tmp/user-$RT.out 2>&1
    rc_user=$?
    cat /tmp/user-$RT.out
    say "$RT, user, delegated v2: rc=$rc_user in $(( $(date +%s) - t0 )) s: $(tail -1 /tmp/user-$RT.out)"
    esac
    [ "$rc_root" = 0 ] && [ "$rc_user" = 0 ] || ok=0
    n=$((n + 1))
done
left=$(ps -u "$USER" -o pid=,args= 2>/dev/null)
[ -z "$left" ] || say "processes of $USER left: $left"
if [ "$ok" = 1 ] && [ "$n" -gt 0 ] && [ -z "$left" ]; then say "all passed"; fi
sync
poweroff -f
