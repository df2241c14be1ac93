#!/bin/bash
# Dev/test only (installed by containers/apptainer-dev.sh): run sid's apptainer from
# its root file system ROOT.
#
#   apptainer-enter.sh ROOT [apptainer arguments...]
#
# A private mount namespace (for an unprivileged caller, inside a user namespace
# whose root is the caller), the host's data directories and /proc, /sys, /dev bound
# into ROOT at their own paths, pivot_root into it (Apptainer refuses a chroot), then
# apptainer with the caller's uid (a nested user namespace maps it back) and cwd.
set -euo pipefail
if [ "${1:-}" != --inside ]; then
    root=$1; shift
    if [ "$(id -u)" = 0 ]; then
        exec unshare --mount --propagation private "$0" --inside "$root" "$PWD" 0 0 "$@"
    fi
    exec unshare --user --map-root-user --mount --propagation private \
        "$0" --inside "$root" "$PWD" "$(id -u)" "$(id -g)" "$@"
fi
shift
root=$1 cwd=$2 uid=$3 gid=$4
shift 4
mount --bind "$root" "$root"
for d in /proc /sys /dev; do mount --rbind "$d" "$root$d"; done
# Data lives here on this machine and in CI (spools, state, scratch, checkouts); a
# directory the caller cannot enter (/root for a user) is skipped.
for d in /tmp /var/tmp /var/lib/gradeline /var/log/gradeline /home /root /work /srv /mnt \
         /opt/gradeline/ci "$cwd"; do
    [ -d "$d" ] || continue
    case "$d" in /|/usr|/usr/*|/etc|/etc/*|/bin|/lib|/lib64|/sbin) continue ;; esac
    mkdir -p "$root$d" 2>/dev/null || true
    mount --rbind "$d" "$root$d" 2>/dev/null || true
done
for f in /etc/passwd /etc/group; do mount --bind "$f" "$root$f"; done
cd "$root"
pivot_root . .oldroot
umount -l /.oldroot
cd "$cwd" 2>/dev/null || cd /
if [ "$uid" = 0 ]; then
    exec /usr/bin/apptainer "$@"
fi
exec unshare --user --map-user="$uid" --map-group="$gid" /usr/bin/apptainer "$@"
