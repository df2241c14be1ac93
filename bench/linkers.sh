#!/usr/bin/env bash
# Which linker for the grading image: ld.bfd (g++'s default), gold, lld and mold on
# the object of a typical submission (meanstd's accepted stats.cpp: <cstdio>, <vector>, <cmath>):
# seconds for 20 links, and instructions and last-level-cache misses of one link
# under cachegrind with a simulated L3 of LL_MB MiB (the cachegrind sweep found
# ld.bfd to be g++'s L3 hog).
#   bench/linkers.sh [LL_MB]     (root installs mold, lld and valgrind when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
LL_MB=${1:-2}
need=""
for p in mold lld valgrind g++; do command -v "$p" >/dev/null || command -v "ld.$p" >/dev/null \
  || need="$need $p"; done
if [ -n "$need" ]; then
  [ "$(id -u)" = 0 ] || { echo "missing:$need (apt-get install$need)" >&2; exit 2; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cp grader/examples/meanstd/submissions/accepted/stats.cpp "$W/a.cpp"
g++ -O2 -std=gnu++17 -c -o "$W/a.o" "$W/a.cpp"
printf "%-6s %14s %14s %16s\n" linker "20 links (s)" "instr (M)" "LL misses (k)"
for ld in bfd gold lld mold; do
  t0=$(date +%s.%N)
  for _ in $(seq 20); do g++ -fuse-ld=$ld -o "$W/sol" "$W/a.o"; done
  t1=$(date +%s.%N)
  rm -f "$W"/cg.*
  valgrind --tool=cachegrind --cache-sim=yes --LL=$((LL_MB * 1048576)),16,64 \
    --trace-children=yes --cachegrind-out-file="$W/cg.%p" g++ -fuse-ld=$ld -o "$W/sol" "$W/a.o" \
    >/dev/null 2>&1
  read -r ir ll < <(python3 - "$W" <<'EOF'
import glob, sys
tot = {}
for f in glob.glob(sys.argv[1] + "/cg.*"):
    ev = []
    for line in open(f):
        if line.startswith("events:"):
            ev = line.split()[1:]
        elif line.startswith("summary:"):
            for k, x in zip(ev, map(int, line.split()[1:])):
                tot[k] = tot.get(k, 0) + x
print(tot.get("Ir", 0), tot.get("ILmr", 0) + tot.get("DLmr", 0) + tot.get("DLmw", 0))
EOF
)
  printf "%-6s %14.2f %14.1f %16.1f\n" "$ld" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "$ir / 1000000" | bc -l)" "$(echo "$ll / 1000" | bc -l)"
done
