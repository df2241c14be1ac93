#!/usr/bin/env bash
# The bare loop's unit of work: compile one submission and run + compare every test,
# with no sandbox, no Slurm, no database (the baseline gradeline is measured against).
# Usage: grader/measure/bare_one.sh ASSIGNMENT_DIR SUBMISSION_FILE
# With BARE_LOG set, appends "SUBMISSION START COMPILED END" (bash's own clock, no
# extra processes; COMPILED is "-" after a failed compile) to that file:
# bench/ratio_breakdown.py compares it with gradeline's timings.
set -u
prob=$1; src=$2
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
tl=$(sed -n 's/^time_limit_s: *//p' "$prob/gradeline.yaml" 2>/dev/null); tl=${tl:-1.0}
PY=/usr/bin/python3  # not a pyenv shim on PATH: ~100 ms per call would skew the baseline
hard=$($PY -c "print($tl * 1.25 + 0.5)")
# The same output and memory bounds the sandbox applies (8 MiB output, 256 MiB + runtime
# slack), or one output flood or memory bomb dominates the baseline.
ulimit -f $((8 * 1024)) -v $(((256 + 64) * 1024))
t0=$EPOCHREALTIME
logged() { [ -z "${BARE_LOG:-}" ] || echo "$src $t0 $1 $EPOCHREALTIME" >> "$BARE_LOG"; exit 0; }
case "$src" in
  *.cpp) g++ -O2 -std=gnu++17 -pipe -o "$w/sol" "$src" 2>/dev/null || logged -; run=("$w/sol") ;;
  *.c)   gcc -O2 -std=gnu17 -pipe -o "$w/sol" "$src" -lm 2>/dev/null || logged -; run=("$w/sol") ;;
  *.py)  $PY -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$src" \
           2>/dev/null || logged -; run=($PY "$src") ;;  # a syntax check that writes no .pyc
esac
t1=$EPOCHREALTIME
for inp in $(find "$prob/data" -name '*.in' | sort); do
  timeout "$hard" "${run[@]}" < "$inp" > "$w/out" 2>/dev/null
  if [ -d "$prob/output_validators" ]; then
    $PY "$prob"/output_validators/*/validate.py "$inp" "${inp%.in}.ans" "$w" < "$w/out" >/dev/null 2>&1
  else
    diff -bq "$w/out" "${inp%.in}.ans" >/dev/null 2>&1
  fi
done
logged "$t1"
