#!/usr/bin/env bash
# A cgroup v2 node, booted here under QEMU's TCG emulation, running the sandbox
# contract and the hostile corpus on a real cgroup v2 hierarchy: as root, and as an
# ordinary user given a delegated subtree. This VM's own cgroups are v1 and cannot be
# released; Debian's cloud kernel under QEMU mounts cgroup2 with every controller.
#
#   bench/cgroup2/node.sh ["pytest options"]   (root; `make test-cgroup2`)
#   e.g. bench/cgroup2/node.sh "-k 'memory or fork'"
#
# GRADELINE_CGROUP2_RUNTIMES="bwrap" (or "apptainer") tests one runtime only;
# GRADELINE_NODE_MODES="root" (or "user") one privilege only.
# The node is this machine's own file system, shared read-only with virtiofs and
# made writable in the guest by an overlay on tmpfs (nothing the guest writes reaches
# the host), so it runs this checkout, its venv and the images `make image` built.
# Slow: emulated, every instruction costs ~10-50x; minutes, not seconds. The node reads
# this checkout live: a file replaced meanwhile reads as a stale handle there, so run it
# from a checkout nobody edits (a clone with its own `make venv`, outside /tmp, which
# the node mounts a tmpfs over).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "cgroup2-node: run as root (QEMU, virtiofsd, apt)" >&2; exit 2; }
if ! command -v qemu-system-x86_64 >/dev/null || ! ls /boot/vmlinuz-*-cloud-amd64 >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-system-x86 linux-image-cloud-amd64 >/dev/null
fi
KERNEL=$(ls /boot/vmlinuz-*-cloud-amd64 | sort -V | tail -1)
KVER=${KERNEL#/boot/vmlinuz-}
MODS=/lib/modules/$KVER/kernel
WORK=$(mktemp -d /var/tmp/gl-cgroup2-node.XXXXXX)
LOG=${GRADELINE_CGROUP2_LOG:-$ROOT/bench/results/cgroup2/node.log}
mkdir -p "$(dirname "$LOG")"
cleanup() { if [ -n "${VFSD:-}" ]; then kill "$VFSD" 2>/dev/null || true; fi; rm -rf "$WORK"; }
trap cleanup EXIT

# The initrd: Debian's (busybox, switch_root, virtio_pci) plus a second archive with
# the modules it lacks (fuse, virtiofs, overlay) and our /init.
mkdir -p "$WORK/extra/gl/mods"
cp "$MODS/fs/fuse/fuse.ko" "$MODS/fs/fuse/virtiofs.ko" "$MODS/fs/overlayfs/overlay.ko" \
   "$WORK/extra/gl/mods/"
# Apptainer as root mounts the image's squashfs through a loop device (when they are
# modules of this kernel rather than built in)
for m in drivers/block/loop.ko fs/squashfs/squashfs.ko; do
    [ -f "$MODS/$m" ] && cp "$MODS/$m" "$WORK/extra/gl/mods/"
done
cat > "$WORK/extra/gl/init" <<'INIT'
#!/bin/sh
mkdir -p /proc /sys /dev
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
modprobe virtio_pci
for m in fuse virtiofs overlay loop squashfs; do [ -f /gl/mods/$m.ko ] && insmod /gl/mods/$m.ko; done
mkdir -p /lower /upper /newroot
mount -t virtiofs -o ro hostroot /lower || { echo "GL-NODE: virtiofs mount failed"; poweroff -f; }
mount -t tmpfs -o size=6g tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot
for d in proc sys dev; do mount --move /$d /newroot/$d; done
exec switch_root /newroot /bin/sh "$(cat /gl/node-init)" 
INIT
chmod 0755 "$WORK/extra/gl/init"
# what the node runs: the cgroup v2 tiers, or another script (GRADELINE_NODE_INIT,
# e.g. bench/cgroup2/nfs-init.sh for the NFS tier)
echo "$(realpath "${GRADELINE_NODE_INIT:-$HERE/node-init.sh}")" > "$WORK/extra/gl/node-init"
(cd "$WORK/extra" && find . | cpio -o -H newc --quiet) > "$WORK/extra.cpio"
# (the kernel reads concatenated archives, each starting on a 4-byte boundary)
cp "/boot/initrd.img-$KVER" "$WORK/initrd"
size=$(stat -c %s "$WORK/initrd")
head -c $(( (512 - size % 512) % 512 )) /dev/zero >> "$WORK/initrd"
cat "$WORK/extra.cpio" >> "$WORK/initrd"

# What the guest runs: this checkout's tests (PYTEST_ADDOPTS: the options given here),
# handed over in a file named on the kernel command line.
ARGS=${1:-}
# the runtimes to test (default: both)
printf '%s\n' "$ROOT" "$ARGS" "${GRADELINE_CGROUP2_RUNTIMES:-bwrap apptainer}" > "$WORK/args"
# and the GRADELINE_NODE_* settings, as KEY=VALUE lines (the guest starts with no
# environment of ours)
env | grep '^GRADELINE_NODE_[A-Z_]*=' >> "$WORK/args" || true
sync  # the guest reads the host's files through virtiofs

/usr/lib/qemu/virtiofsd --socket-path="$WORK/vfsd.sock" -o source=/ -o cache=auto \
    -o sandbox=chroot >"$WORK/vfsd.log" 2>&1 &
VFSD=$!
for _ in $(seq 50); do [ -S "$WORK/vfsd.sock" ] && break; sleep 0.1; done
MEM=${GRADELINE_CGROUP2_MEM:-4096}
echo "cgroup2-node: booting $KVER under TCG (${MEM} MiB, 2 CPUs); log: $LOG"
start=$(date +%s)
timeout "${GRADELINE_CGROUP2_TIMEOUT:-7200}" qemu-system-x86_64 -accel tcg -m "$MEM" -smp 2 \
    -nographic -no-reboot \
    -object memory-backend-memfd,id=mem,size="${MEM}M",share=on -numa node,memdev=mem \
    -chardev socket,id=vfs,path="$WORK/vfsd.sock" \
    -device vhost-user-fs-pci,chardev=vfs,tag=hostroot \
    -kernel "$KERNEL" -initrd "$WORK/initrd" \
    -append "console=ttyS0 rdinit=/gl/init quiet panic=-1 gl_args=$WORK/args" \
    > "$WORK/console" 2>&1 || true
took=$(( $(date +%s) - start ))
# The console, without the terminal's escape codes and carriage returns.
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[c=>]//g; s/\r$//' "$WORK/console" > "$LOG"
# node.log -> summary.txt, soak-node.log -> soak-summary.txt (beside it)
log_name=$(basename "$LOG")
SUMMARY="$(dirname "$LOG")/${log_name%node.log}summary.txt"
{
    echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD) bench/cgroup2/node.sh $ARGS"
    echo "# the node ran $took s (QEMU TCG, ${MEM} MiB, 2 CPUs); full console log: $(basename "$LOG")"
    grep -a "^GL-NODE\|^FAILED" "$LOG" || true
} > "$SUMMARY"
echo "cgroup2-node: the node ran $took s"
grep "^GL-NODE" "$SUMMARY" || true
grep -q "^GL-NODE: all passed" "$SUMMARY"
