"""Kattis output validator for 'spread': argv = input judge_answer feedback_dir,
team output on stdin; exit 42 = accept, 43 = reject."""
import sys

def reject(msg):
    with open(sys.argv[3] + "/judgemessage.txt", "w") as f:
        f.write(msg + "\n")
    sys.exit(43)

n = int(open(sys.argv[1]).read().split()[0])
judge = open(sys.argv[2]).read().split()
possible = judge != ["-1"]
team = sys.stdin.buffer.read(16 * 1024 * 1024).split()
if not team:
    reject("empty output")
if team == [b"-1"]:
    if possible:
        reject(f"said -1 but n={n} has a solution")
    sys.exit(42)
if not possible:
    reject(f"n={n} has no solution, expected -1")
if len(team) != n:
    reject(f"expected {n} numbers, got {len(team)}")
try:
    p = [int(t) for t in team]
except ValueError:
    reject("output has a token that is not an integer")
if sorted(p) != list(range(1, n + 1)):
    reject("output is not a permutation of 1..n")
for i in range(n - 1):
    if abs(p[i] - p[i + 1]) == 1:
        reject(f"positions {i + 1} and {i + 2} hold {p[i]} and {p[i + 1]}")
sys.exit(42)
