#!/usr/bin/env bash
# Dev/test setup, never part of the product: a real Apptainer on Debian 12.
#
# Debian 12 ships no Apptainer; Debian's archive has apptainer 1.4.5 in sid, which
# needs sid's glibc. This script debootstraps a sid root holding it and installs a
# shim at /usr/local/bin/apptainer that enters that root in a private mount
# namespace with pivot_root (Apptainer refuses a chroot) and runs it there, with
# the host's data directories bound at their own paths. gradeline itself only ever
# calls `apptainer` from PATH, as on a site.
#
#   containers/apptainer-dev.sh install    debootstrap + configure + shim (root; ~60 s once)
#   containers/apptainer-dev.sh status     what is installed, and the version
#   containers/apptainer-dev.sh remove     remove the shim (the root stays for reuse)
#
# Pitfalls measured on this machine (../shared/design.md): the archive is a frozen
# copy (apt inside the sid root needs Check-Valid-Until=false); the root needs
# /etc/hosts and an empty /.oldroot; `systemd cgroups = no` (no systemd); this VM's
# root lacks CAP_SYS_RESOURCE, so `root default capabilities = file` plus an explicit
# capability list for root; unprivileged SIF mounts need squashfuse and a /dev/fuse
# that users may open (0666, as Debian's udev rule makes it).
set -euo pipefail
ROOT=${GRADELINE_APPTAINER_ROOT:-/opt/gradeline/apptainer-sid}
SHIM=${GRADELINE_APPTAINER_SHIM:-/usr/local/bin/apptainer}
MIRROR=${GRADELINE_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
PACKAGES=apptainer,squashfs-tools,squashfuse,fuse-overlayfs,fuse3,uidmap,ca-certificates
ROOT_CAPS=CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_DAC_READ_SEARCH,CAP_FOWNER,CAP_FSETID,CAP_KILL,CAP_SETGID,CAP_SETUID,CAP_SETPCAP,CAP_SYS_ADMIN,CAP_SYS_CHROOT,CAP_MKNOD,CAP_NET_ADMIN,CAP_NET_BIND_SERVICE,CAP_AUDIT_WRITE

die() { echo "apptainer-dev: $*" >&2; exit 1; }

works() { [ -x "$SHIM" ] && "$SHIM" version >/dev/null 2>&1; }

install_root() {
    [ -x "$ROOT/usr/bin/apptainer" ] && return 0
    command -v debootstrap >/dev/null || die "debootstrap missing: apt-get install debootstrap"
    local tmp="$ROOT.tmp"
    rm -rf "$tmp"
    mkdir -p "$(dirname "$ROOT")"
    echo "apptainer-dev: debootstrap sid ($PACKAGES) from $MIRROR (about a minute)"
    debootstrap --variant=minbase --include="$PACKAGES" \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg sid "$tmp" "$MIRROR" \
        > "$(dirname "$ROOT")/debootstrap.log" 2>&1 \
        || die "debootstrap failed; see $(dirname "$ROOT")/debootstrap.log"
    chroot "$tmp" apt-get clean
    mv "$tmp" "$ROOT"
}

configure() {
    local conf=$ROOT/etc/apptainer/apptainer.conf
    sed -i -e 's/^systemd cgroups = .*/systemd cgroups = no/' \
           -e 's/^root default capabilities = .*/root default capabilities = file/' "$conf"
    [ -s "$ROOT/etc/hosts" ] || printf '127.0.0.1 localhost\n::1 localhost\n' > "$ROOT/etc/hosts"
    mkdir -p "$ROOT/.oldroot" "$ROOT/.host"
    grep -q '^root:' "$ROOT/etc/subuid" 2>/dev/null || echo 'root:100000:65536' >> "$ROOT/etc/subuid"
    grep -q '^root:' "$ROOT/etc/subgid" 2>/dev/null || echo 'root:100000:65536' >> "$ROOT/etc/subgid"
    # Unprivileged SIF mounts go through squashfuse: users must be able to open
    # /dev/fuse, as on a Debian system whose udev rule makes it 0666.
    [ -c /dev/fuse ] && chmod 0666 /dev/fuse
}

write_shim() {
    cat > "$SHIM.tmp" <<EOF
#!/bin/bash
# Dev shim written by containers/apptainer-dev.sh: runs sid's apptainer 1.4.5 from
# $ROOT in a private mount namespace entered with pivot_root, with the host's data
# directories bound at their own paths. Not part of gradeline.
exec /usr/local/lib/gradeline-apptainer-enter "$ROOT" "\$@"
EOF
    chmod 0755 "$SHIM.tmp"
    install -m 0755 "$(dirname "$0")/apptainer-enter.sh" /usr/local/lib/gradeline-apptainer-enter
    mv "$SHIM.tmp" "$SHIM"
}

case "${1:-status}" in
    install)
        [ "$(id -u)" = 0 ] || die "run as root (it debootstraps and writes $SHIM)"
        if works && [ "$(cat "$ROOT/.gradeline-configured" 2>/dev/null)" = 2 ]; then
            echo "apptainer-dev: $("$SHIM" version) already installed ($SHIM -> $ROOT)"
            exit 0
        fi
        install_root
        configure
        write_shim
        "$SHIM" capability add --user root "$ROOT_CAPS" >/dev/null 2>&1 || true
        works || die "the shim does not run apptainer; see above"
        echo 2 > "$ROOT/.gradeline-configured"
        echo "apptainer-dev: apptainer $("$SHIM" version) at $SHIM (sid root $ROOT)"
        ;;
    status)
        if works; then echo "apptainer $("$SHIM" version) via $SHIM (sid root $ROOT)"; else
            echo "not installed (run: sudo $0 install)"; exit 1; fi
        ;;
    remove)
        rm -f "$SHIM" /usr/local/lib/gradeline-apptainer-enter
        echo "apptainer-dev: shim removed ($ROOT kept)"
        ;;
    *) die "usage: $0 install|status|remove" ;;
esac
