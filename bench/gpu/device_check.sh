#!/usr/bin/env bash
# The CUDA example (grader/examples/gpusum) on a real GPU, as one short script that
# needs nothing but a machine with an NVIDIA GPU, its driver and nvcc (no gradeline, no
# network): every labelled submission compiled and run against every test, each given a
# verdict the way gradeline gives one (wall limit, exit status, token compare) and held
# against its label; then the accepted one run through gl-runner in bubblewrap with only
# the GPU it is given bound in (and once with none); then the GPU against the host loop.
#
#   bench/gpu/device_check.sh [PREBUILT]   # PREBUILT: binaries built elsewhere (optional)
#
# Output: a table on stdout (and in $OUT/gpu-check.txt when $OUT is set). Exit 0 when
# every verdict matches its label.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$here/grader/examples/gpusum
prebuilt=${1:-}
out=${OUT:-/tmp}/gpu-check.txt
limit_s=$(sed -n 's/^time_limit_s: *//p' "$pkg/gradeline.yaml")
flags=(-O2 -arch=sm_90)
work=$(mktemp -d)
status=0
say() { echo "$*" | tee -a "$out"; }
: > "$out"
say "# $(date -u +%FT%TZ) $(uname -r)"
say "# $(nvidia-smi -L 2>&1 | head -2 | paste -sd' ' -)"
say "# driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1); $(nvcc --version | tail -1)"

verdict() {  # verdict BINARY INPUT ANSWER -> AC WA TLE RE (+ seconds)
    local t0 t1 rc got
    t0=$(date +%s.%N)
    timeout -s KILL "$limit_s" "$1" < "$2" > "$work/out" 2> "$work/err"
    rc=$?
    t1=$(date +%s.%N)
    local s; s=$(awk "BEGIN {print $t1 - $t0}")
    if [ $rc = 137 ]; then echo "TLE $s"; return; fi
    if [ $rc != 0 ]; then echo "RE $s"; return; fi
    got=$(tr -s ' \n' ' ' < "$work/out" | sed 's/ $//')
    [ "$got" = "$(tr -s ' \n' ' ' < "$3" | sed 's/ $//')" ] && echo "AC $s" || echo "WA $s"
}

grade() {  # grade LABEL NAME BINARY: the submission's verdict (the first failing test's)
    local label=$1 name=$2 bin=$3 worst=AC line=""
    for t in "$pkg"/data/sample/*.in "$pkg"/data/secret/*.in; do
        read -r v s <<< "$(verdict "$bin" "$t" "${t%.in}.ans")"
        line+=" $(basename "${t%.in}")=$v($(printf '%.2f' "$s")s)"
        [ "$worst" = AC ] && [ "$v" != AC ] && worst=$v
    done
    local expect=${label%%_*}
    case $label in accepted) expect=AC;; wrong_answer) expect=WA;; time_limit_exceeded) expect=TLE;;
                   run_time_error) expect=RE;; compile_error) expect=CE;; esac
    local ok=ok; [ "$worst" = "$expect" ] || { ok=MISMATCH; status=1; }
    say "$(printf '%-9s %-38s expected %-3s got %-3s |%s' "$ok" "$name" "$expect" "$worst" "$line")"
}

say "## compiled here with nvcc ${flags[*]}"
for src in "$pkg"/submissions/*/*.cu; do
    label=$(basename "$(dirname "$src")"); name=$label/$(basename "$src")
    if ! nvcc "${flags[@]}" -o "$work/sol" "$src" > "$work/cc" 2>&1; then
        [ "$label" = compile_error ] && say "ok        $name expected CE  got CE" || {
            say "MISMATCH  $name did not compile: $(tail -2 "$work/cc" | paste -sd' ' -)"; status=1; }
        continue
    fi
    [ "$label" = compile_error ] && { say "MISMATCH  $name compiled"; status=1; continue; }
    grade "$label" "$name" "$work/sol"
done
if [ -n "$prebuilt" ]; then
    say "## built elsewhere (PyPI's nvidia-cuda-nvcc, as the assignment's image builds them)"
    for bin in "$prebuilt"/*__*; do
        n=$(basename "$bin"); grade "${n%%__*}" "${n%%__*}/${n#*__}.cu" "$bin"
    done
fi

say "## in the sandbox: gl-runner under bubblewrap, the GPU given bound in, and none"
bwrap=$(command -v bwrap || echo "$prebuilt/bwrap")
runner=$prebuilt/gl-runner
if [ -x "$bwrap" ] && [ -x "$runner" ] && [ -x "$prebuilt/accepted__reduce" ]; then
    export LD_LIBRARY_PATH=${prebuilt%/bin}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    w=$(mktemp -d); chmod 777 "$w"; mkdir -p "$w/run"; cp "$prebuilt/accepted__reduce" "$w/run/sol"
    cp "$pkg/data/secret/04-large.in" "$w/in"; chmod -R a+rwX "$w"
    gpu=(); for d in /dev/nvidia0 /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools; do
        [ -e "$d" ] && gpu+=(--dev-bind "$d" "$d"); done
    libs=(); [ -d /usr/local/nvidia ] && libs=(--ro-bind /usr/local/nvidia /usr/local/nvidia)
    for devices in with none; do
        binds=(); [ $devices = with ] && binds=("${gpu[@]}")
        req=$(printf '%s\n' "argv ./sol" "env PATH=/usr/bin:/bin" \
            "env LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib" \
            "workdir /gl/work/run" "writable 0" "stdout /gl/work/out" "stderr /gl/work/err" \
            "stdin /gl/work/in" "cpu_hard_s 10" "cpu_hard_ms 10000" "wall_ms 10000" \
            "procs 64" "tmpfs 67108864" "run")
        reply=$( { printf '%s\n' "$req"; sleep 15; } | timeout 30 setpriv --reuid=61000 \
            --regid=61000 --clear-groups -- "$bwrap" --unshare-all --die-with-parent \
            --new-session --tmpfs / --ro-bind /usr /usr --symlink usr/lib /lib \
            --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin \
            --ro-bind /etc /etc --dir /work --dir /tmp --dir /var/tmp --proc /proc \
            --dev /dev "${binds[@]}" "${libs[@]}" --bind "$w" /gl/work \
            --ro-bind "$runner" /gl/gl-runner /gl/gl-runner 2>&1 | head -20)
        say "GPU $devices: $(echo "$reply" | grep -E '^(status|exit-code|signal|error|wall-time-s)' | paste -sd' ' -) | out: $(head -c 100 "$w/out" 2>/dev/null) | err: $(head -c 200 "$w/err" 2>/dev/null | tr '\n' ' ')"
    done
    [ "$(cat "$w/out" 2>/dev/null)" = "" ] || true
else
    say "skipped: no bwrap or gl-runner given (PREBUILT holds them)"
fi

say "## the GPU against the host loop, 04-large, 5 runs each (wall seconds)"
nvcc "${flags[@]}" -o "$work/gpu" "$pkg/submissions/accepted/reduce.cu" 2>/dev/null
nvcc "${flags[@]}" -o "$work/host" "$pkg/submissions/accepted/host_loop.cu" 2>/dev/null
for b in gpu host; do
    ts=""; for i in 1 2 3 4 5; do ts+=" $(verdict "$work/$b" "$pkg/data/secret/04-large.in" \
        "$pkg/data/secret/04-large.ans" | cut -d' ' -f2 | xargs printf '%.3f')"; done
    say "$b:$ts"
done
say "# exit $status"
exit $status
