#!/bin/bash
# What a sandboxed MPI rank can reach, per runtime, user and confinement, on the cluster
# of bench/mpinet/cluster.sh (start it first).  Root; the ordinary user must exist.
#
#   bench/mpinet/matrix.sh probes    a 2-rank job on m1+m2 per row: MPI_Init and an
#                                    Allreduce, then 10 probes (table: what rank 0 reached)
#   bench/mpinet/matrix.sh hostile   hostile.c under glnet -L, -B, -L -B, as the user
#   bench/mpinet/matrix.sh timing    srun wall and MPI_Init per variant (median of N=7)
#
# Environment: GRADELINE_MPI_ROOTFS / GRADELINE_MPI_SIF (default: the newest grading
# image under /var/lib/gradeline/images that has Open MPI), MPI_USER (default
# gradeline-mpiuser), WHOS, RTS, CONFS (e.g. CONFS="none -L -B -L_-B cg").
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
W=${GRADELINE_MPINET_DIR:-/tmp/gradeline-mpinet}
MPI_USER=${MPI_USER:-gradeline-mpiuser}
C() { "$HERE/cluster.sh" run "$@"; }
if [ -z "${GRADELINE_MPI_ROOTFS:-}" ]; then
    for d in $(ls -dt /var/lib/gradeline/images/grader-*/ 2>/dev/null); do
        [ -x "$d/usr/bin/mpicc" ] && [ -f "${d%/}.sif" ] && { GRADELINE_MPI_ROOTFS=${d%/}; break; }
    done
fi
export GRADELINE_MPI_ROOTFS=${GRADELINE_MPI_ROOTFS:?no grading image with Open MPI: build one}
export GRADELINE_MPI_SIF=${GRADELINE_MPI_SIF:-$GRADELINE_MPI_ROOTFS.sif}

build() {
    mkdir -p "$W/bin"; chmod 755 "$W" "$W/bin"
    gcc -O2 -Wall -static -o "$W/bin/glnet" "$HERE/glnet.c" 2>&1 | grep -v 'statically linked'
    gcc -O2 -Wall -static -o "$W/bin/hostile" "$HERE/hostile.c" 2>&1 | grep -v 'statically linked'
    mpicc -O2 -Wall -o "$W/bin/mpiprobe" "$HERE/mpiprobe.c"
    chmod -R a+rX "$W/bin"
}

# the outside host: TCP on 9999 and 20000-20999 (a rank's own reserved ports, elsewhere),
# UDP 9999; every connection and datagram logged to $W/ext.log
outside_up() {
    nsenter --net=/run/netns/glmpi-ext bash -c 'ulimit -n 4096; exec python3 -c "
import selectors, socket, sys, time
sel = selectors.DefaultSelector()
for p in [9999] + list(range(20000, 21000)):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((\"10.99.0.2\", p)); s.listen(8); sel.register(s, selectors.EVENT_READ, (\"tcp\", p))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((\"10.99.0.2\", 9999))
sel.register(u, selectors.EVENT_READ, (\"udp\", 9999))
log = open(sys.argv[1], \"a\", buffering=1)
while True:
    for k, _ in sel.select():
        if k.data[0] == \"tcp\": c, a = k.fileobj.accept(); c.close()
        else: d, a = k.fileobj.recvfrom(100)
        log.write(f\"{time.time():.3f} {k.data} from {a}\\n\")
" "$0"' "$W/ext.log" >/dev/null 2>&1 &
    OUTSIDE=$!
    # abstract unix sockets of another user on node m1
    nsenter --net=/run/netns/glmpi-n1 runuser -u nobody -- python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind("\0glmpi-abstract"); s.listen(4)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("\0glmpi-abstractd")
time.sleep(3600)' >/dev/null 2>&1 &
    ABSTRACT=$!
    sleep 1
}
outside_down() { kill "$OUTSIDE" "$ABSTRACT" 2>/dev/null; wait 2>/dev/null; }
cleanup_nft() {
    local n v2
    for n in glmpi-n1 glmpi-n2; do ip netns exec $n nft delete table inet glmpi 2>/dev/null; done
    v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
    [ -n "$v2" ] && rmdir "$v2"/glmpi/* "$v2/glmpi" 2>/dev/null
    true
}
job() {  # job USER ENV... -> the job's output
    local who=$1; shift
    C timeout "${TMO:-120}" runuser -u "$who" -- srun --resv-ports=4 --mpi=pmix -N2 -n2 -w m1,m2 env "$@" "$HERE/rank.sh" 2>&1 </dev/null
}
variants() {  # "who rt conf" lines
    local who rt conf
    for who in ${WHOS:-root $MPI_USER}; do for rt in ${RTS:-none bwrap apptainer pasta}; do
        for conf in ${CONFS:-none -L -B -L_-B cg}; do
            [ "$conf" = cg ] && [ "$who" != root ] && continue        # root only
            [ "$rt" = pasta ] && { [ "$who" = root ] || [ "$conf" = cg ]; } && continue
            echo "$who $rt $conf"
        done
    done; done
}
envof() {  # CONF= / CGNFT= for a matrix conf
    case "$1" in none) echo "CONF=" ;; cg) echo "CGNFT=1 CONF=" ;; *) echo "CONF=$1" ;; esac
}

probes() {
    : > "$W/ext.log"
    outside_up
    TMO=${HOLD_OTHER:-900} job root RT=none HOLD=${HOLD_OTHER:-900} > "$W/other.out" &
    local other=$! i
    for i in $(seq 100); do grep -q 'allreduce' "$W/other.out" 2>/dev/null && break; sleep 0.2; done
    local op oq
    op=$(sed -n 's/^ports \([0-9]*\)-.*/\1/p' "$W/other.out")
    oq=$(sed -n 's/^rank 0 pmix server port //p' "$W/other.out")
    echo "another job: ranks on 10.53.0.1:$op and 10.53.0.2:$op, its m1 stepd's PMIx server on 127.0.0.1:$oq"
    local P="127.0.0.1:$oq,127.0.0.1:17001,10.53.0.2:17002,10.53.0.254:6817,10.53.0.1:$op,10.53.0.2:$op,10.99.0.2:9999,ext+2,ext+3,10.99.0.2:9999/udp"
    printf '%-18s %-9s %-6s %-5s %s\n' user runtime conf mpi "reached by rank 0 (of 10 probes)"
    while read -r who rt conf; do
        local out ok reached n
        # shellcheck disable=SC2046
        out=$(job "$who" RT="$rt" $(envof "$conf") PROBE="$P")
        ok=$(grep -c 'allreduce=3 (want 3)' <<<"$out")
        reached=$(grep '^rank 0 probe' <<<"$out" | grep -E 'CONNECTED|SENT' | sed 's/rank 0 probe \([^ ]*\) .*/\1/' | paste -sd' ')
        n=$(grep -c '^rank 0 probe' <<<"$out")
        printf '%-18s %-9s %-6s %-5s %s\n' "$who" "$rt" "${conf//_/}" "$ok/2" "${reached:-nothing} [$n probes]"
        [ "$ok" = 2 ] || tail -4 <<<"$out" | sed 's/^/    /'
        cleanup_nft
    done < <(variants)
    C scancel "$(sed -n 's/^ports .* job //p' "$W/other.out")"; wait $other 2>/dev/null
    outside_down
    echo "UDP datagrams the outside host received: $(grep -c udp "$W/ext.log" 2>/dev/null)"
}

hostile() {
    outside_up
    local c
    for c in "-L" "-B" "-L -B"; do
        echo "== glnet $c, as $MPI_USER, on m1"
        local extra=(); [ "$c" = "-B" ] && extra=(nokill)   # no Landlock: the supervisor dies
        C runuser -u "$MPI_USER" -- srun -w m1 -N1 -n1 "$W/bin/glnet" $c -p 127.0.0.1:1 \
            -a 10.53.0.1 -r 20000-20003 -- "$W/bin/hostile" "${extra[@]}" 2>&1 </dev/null | grep -v 'srun: job'
    done
    outside_down
}

timing() {
    local N=${N:-7}
    while read -r who rt conf; do
        local ws=() is=() i out t0 t1 bad=0
        for i in $(seq "$N"); do
            t0=$(date +%s.%N)
            # shellcheck disable=SC2046
            out=$(TMO=30 job "$who" RT="$rt" $(envof "$conf"))
            t1=$(date +%s.%N)
            cleanup_nft
            if [ "$(grep -c 'allreduce=3 (want 3)' <<<"$out")" != 2 ]; then
                bad=$((bad + 1)); C scancel -u "$who" 2>/dev/null; sleep 2; continue
            fi
            ws+=("$(echo "$t1 - $t0" | bc)")
            is+=("$(grep -o 'init=[0-9.]*' <<<"$out" | cut -d= -f2 | sort -n | tail -1)")
        done
        med() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
        if [ ${#ws[@]} = 0 ]; then printf '%-18s %-9s %-6s all %d runs failed\n' "$who" "$rt" "${conf//_/}" "$N"; continue; fi
        printf '%-18s %-9s %-6s srun %5.2fs (min %5.2f, max %5.2f)  MPI_Init %5.3fs  failed %d of %d\n' \
            "$who" "$rt" "${conf//_/}" "$(med "${ws[@]}")" "$(printf '%s\n' "${ws[@]}" | sort -n | head -1)" \
            "$(printf '%s\n' "${ws[@]}" | sort -n | tail -1)" "$(med "${is[@]}")" "$bad" "$N"
    done < <(variants)
}

[ "$(id -u)" = 0 ] || { echo "matrix.sh: run as root" >&2; exit 1; }
id "$MPI_USER" >/dev/null 2>&1 || { echo "matrix.sh: no user $MPI_USER (useradd -m $MPI_USER)" >&2; exit 1; }
echo "image: $GRADELINE_MPI_ROOTFS (+ .sif)"
build
case "${1:-probes}" in
    probes) probes ;;
    hostile) hostile ;;
    timing) timing ;;
    *) echo "usage: $0 probes|hostile|timing" >&2; exit 2 ;;
esac
