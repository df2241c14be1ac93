#!/usr/bin/env bash
# gradeline through Slurm vs the bare loop (xargs -P: compile + run + compare, no
# sandbox, no Slurm, no database) on the same example course and the same CPUs.
# "Every submission": the bare loop's work (no dedupe, no compile cache, no
# precompiled headers, g++'s default linker). "Work avoidance": gradeline's defaults
# on the same resubmission trace (`gradeline corpus`: 1-3 attempts per student and
# assignment, most personalised by a comment, 15% of later attempts identical
# resubmissions, 20% verbatim starter code), from a cold compile cache; then the
# same with Kattis's on_reject: break for every group (GRADELINE_ON_REJECT).
#   bench/throughput.sh [COUNT] [SEED]
# Needs: root, the local Slurm cluster (slurm/local-cluster.sh start), g++.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${1:-240}; SEED=${2:-1}
G=.venv/bin/gradeline
W=$(mktemp -d /var/tmp/gl-throughput-XXXX)
NCPU=$(nproc)
$G corpus "$W/course" --count "$COUNT" --seed "$SEED" >/dev/null
EX=$($G examples | head -1 | xargs dirname)
tail -n +2 "$W/course/manifest.csv" | cut -d, -f3,6 | tr , ' ' \
  | awk -v ex="$EX" -v c="$W/course" '{print ex"/"$1" "c"/"$2}' > "$W/jobs.txt"
t0=$(date +%s.%N)
xargs -P "$NCPU" -L 1 grader/measure/bare_one.sh < "$W/jobs.txt" 2>/dev/null  # the killed ones are expected
t1=$(date +%s.%N)
bare=$(echo "$t1 - $t0" | bc)
fresh_db() {  # a scratch database, so no earlier run's results are reused
  $G db fresh gradeline_tp
}
run_gradeline() {  # $1: extra run options; prints seconds
  rm -rf "$W/spool"
  export GRADELINE_DB_URL=$(fresh_db)
  $G corpus "$W/course" --count "$COUNT" --seed "$SEED" --submit-to "$W/spool" \
     --course "tp-$RANDOM$RANDOM" >/dev/null
  local s e
  s=$(date +%s.%N)
  $G run --spool "$W/spool" --course "tp-$RANDOM" --executor slurm "$@" >/dev/null 2>&1
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
CACHE=${GRADELINE_STATE_DIR:-/var/lib/gradeline}/work/compile-cache
nodedupe=$(GRADELINE_COMPILE_CACHE=0 GRADELINE_COMPILE_ACCEL=0 run_gradeline --no-dedupe)
arrays=$(GRADELINE_COMPILE_CACHE=0 GRADELINE_COMPILE_ACCEL=0 run_gradeline --no-dedupe --dispatch arrays)
rm -rf "$CACHE"   # work avoidance starts cold: only this batch may warm it
dedupe=$(run_gradeline)
rm -rf "$CACHE"
onreject=$(GRADELINE_ON_REJECT=break run_gradeline)
echo "course: $COUNT submissions (seed $SEED), $NCPU cpus"
printf "bare loop (xargs -P%s):                  %6.1f s  %5.2f subs/s\n" "$NCPU" "$bare" "$(echo "$COUNT / $bare" | bc -l)"
printf "gradeline via Slurm, every submission:   %6.1f s  %5.2f subs/s  ratio %.2f  (pilots)\n" "$nodedupe" "$(echo "$COUNT / $nodedupe" | bc -l)" "$(echo "$bare / $nodedupe" | bc -l)"
printf "  the same, one array per batch:         %6.1f s  %5.2f subs/s  ratio %.2f\n" "$arrays" "$(echo "$COUNT / $arrays" | bc -l)" "$(echo "$bare / $arrays" | bc -l)"
printf "gradeline via Slurm, work avoidance:     %6.1f s  %5.2f subs/s  ratio %.2f\n" "$dedupe" "$(echo "$COUNT / $dedupe" | bc -l)" "$(echo "$bare / $dedupe" | bc -l)"
printf "  the same + on_reject: break:           %6.1f s  %5.2f subs/s  ratio %.2f\n" "$onreject" "$(echo "$COUNT / $onreject" | bc -l)" "$(echo "$bare / $onreject" | bc -l)"
rm -rf "$W"
