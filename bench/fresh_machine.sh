#!/usr/bin/env bash
# A newcomer's check: clone this repository into a temporary directory and run the
# README's two commands there as a new user would, with every gradeline cache (images,
# assignment images, Slurm state, databases, scratch) in an empty state directory and
# pip's and uv's caches empty; print
# each command's status and time, and keep the summary and logs in bench/results/fresh/.
#
#   sudo bench/fresh_machine.sh                         # make demo, then make test
#   sudo bench/fresh_machine.sh --order reverse         # the test modules in reverse
#   sudo bench/fresh_machine.sh --order random:7 --only test --runs 2
#
# What it cannot empty is what a machine installs once for every checkout: Debian's
# packages and the development Apptainer under /opt/gradeline (make installs them when
# missing). A local cluster of another state directory is stopped first: its daemons
# hold the ports. Exit status: 0 when every command passed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
order=file only="demo test" runs=1 out=$repo/bench/results/fresh keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --order) order=$2; shift ;;
        --only) only=$2; shift ;;
        --runs) runs=$2; shift ;;
        --out) out=$2; shift ;;
        --keep) keep=1 ;;
        *) echo "usage: $0 [--order file|reverse|random:SEED] [--only demo|test] [--runs N] [--out DIR] [--keep]" >&2
           exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "fresh_machine: run as root, as the README's commands are on a fresh machine" >&2; exit 2; }

# another checkout's local cluster (its slurmctld names its config) holds the ports
for pid in $(pgrep -x slurmctld); do
    conf=$(tr '\0' '\n' < "/proc/$pid/cmdline" | sed -n '/^-f$/{n;p;q}')
    [ -n "$conf" ] && GRADELINE_STATE_DIR=$(dirname "$(dirname "$conf")") \
        "$repo/slurm/local-cluster.sh" stop >/dev/null 2>&1
done

mkdir -p "$out"
summary=$out/summary.txt
commit=$(git -C "$repo" rev-parse --short HEAD)
status=0
for run in $(seq 1 "$runs"); do
    work=$(mktemp -d /var/tmp/gradeline-fresh.XXXXXX)
    chmod 755 "$work"  # the sandbox uid and the site user read the clone and its venv
    git clone -q "$repo" "$work/clone"
    echo "$(date -u +%FT%TZ) commit $commit run $run/$runs, order $order, clone $work/clone," \
         "state $work/state (empty)" | tee -a "$summary"
    for cmd in $only; do
        t0=$(date +%s)
        log=$out/make-$cmd-$commit-${order//:/-}-run$run.log  # one per run: none overwritten
        # pip's and uv's caches empty too, and no local wheel directory (this machine's
        # PIP_FIND_LINKS): the venv's packages come from the index as a newcomer's do
        (cd "$work/clone" && env -u PIP_FIND_LINKS GRADELINE_STATE_DIR=$work/state \
            GRADELINE_TEST_ORDER=$order PIP_CACHE_DIR=$work/cache/pip UV_CACHE_DIR=$work/cache/uv \
            make "$cmd") > "$log" 2>&1
        rc=$?
        [ $rc = 0 ] || status=1
        tail=$(grep -E '^(FAILED|ERROR) |^[0-9]+ (passed|failed)|[0-9]+ passed|final grades:|graded to final grades|submissions checked' \
               "$log" | tail -6 | cut -c1-300 | paste -sd ';' -)
        echo "  make $cmd: exit $rc in $(( $(date +%s) - t0 )) s  ($tail)" | tee -a "$summary"
    done
    (cd "$work/clone" && GRADELINE_STATE_DIR=$work/state slurm/local-cluster.sh stop >/dev/null 2>&1
     GRADELINE_STATE_DIR=$work/state .venv/bin/gradeline db stop >/dev/null 2>&1)
    [ $keep = 1 ] || rm -rf "$work"
done
exit $status
