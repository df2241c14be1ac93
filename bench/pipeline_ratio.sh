#!/usr/bin/env bash
# The pipeline/bare ratio without work avoidance, measured in rounds: each round runs
# the bare loop, then gradeline through Slurm (pilots) under Apptainer, then under
# bubblewrap, on the same course and CPUs, and prints each run's ratio to the bare
# loop of its own round (this machine is noisy: compare within a round), then the
# median per runtime.
#   bench/pipeline_ratio.sh [ROUNDS] [COUNT]
# Needs: root, the local Slurm cluster (slurm/local-cluster.sh start), g++.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; COUNT=${2:-240}; SEED=1
G=.venv/bin/gradeline
W=$(mktemp -d /var/tmp/gl-ratio-XXXX); trap 'rm -rf "$W"' EXIT
NCPU=$(nproc)
$G corpus "$W/course" --count "$COUNT" --seed "$SEED" >/dev/null
EX=$($G examples | head -1 | xargs dirname)
tail -n +2 "$W/course/manifest.csv" | cut -d, -f3,6 | tr , ' ' \
  | awk -v ex="$EX" -v c="$W/course" '{print ex"/"$1" "c"/"$2}' > "$W/jobs.txt"
bare() {
  local s e; s=$(date +%s.%N)
  xargs -P "$NCPU" -L 1 grader/measure/bare_one.sh < "$W/jobs.txt" 2>/dev/null
  e=$(date +%s.%N); echo "$e - $s" | bc
}
pipeline() {  # $1: runtime; the bare loop's work: no dedupe, cache, PCH or gold
  rm -rf "$W/spool"
  local url s e; url=$($G db fresh gradeline_ratio)
  GRADELINE_DB_URL=$url $G corpus "$W/course" --count "$COUNT" --seed "$SEED" \
    --submit-to "$W/spool" --course "r-$RANDOM" >/dev/null
  s=$(date +%s.%N)
  GRADELINE_DB_URL=$url GRADELINE_RUNTIME=$1 GRADELINE_COMPILE_CACHE=0 GRADELINE_COMPILE_ACCEL=0 \
    $G run --spool "$W/spool" --course "r-$RANDOM" --executor slurm --no-dedupe >/dev/null 2>&1
  e=$(date +%s.%N); echo "$e - $s" | bc
}
GRADELINE_RUNTIME=bwrap $G image build >/dev/null  # both runtimes' images are ready
echo "course: $COUNT submissions (seed $SEED), $NCPU cpus, $ROUNDS rounds"
printf "%5s %8s %12s %6s %12s %6s\n" round bare_s apptainer_s ratio bwrap_s ratio
: > "$W/ratios"
for r in $(seq "$ROUNDS"); do
  b=$(bare); a=$(pipeline apptainer); w=$(pipeline bwrap)
  ra=$(echo "$b / $a" | bc -l); rw=$(echo "$b / $w" | bc -l)
  printf "%5d %8.1f %12.1f %6.2f %12.1f %6.2f\n" "$r" "$b" "$a" "$ra" "$w" "$rw"
  echo "$ra $rw" >> "$W/ratios"
done
python3 - "$W/ratios" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
print(f"median ratio: apptainer {statistics.median(r[0] for r in rows):.2f}, "
      f"bubblewrap {statistics.median(r[1] for r in rows):.2f}")
PY
