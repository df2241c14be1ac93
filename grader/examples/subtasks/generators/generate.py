"""Writes subtasks' test data (deterministic): python3 generate.py ../data"""
import os
import random
import sys


def best(a):
    cur, top = 0, a[0]
    for x in a:
        cur = max(x, cur + x)
        top = max(top, cur)
    return top


def write(path, a):
    with open(path + ".in", "w") as f:
        f.write(f"{len(a)}\n{' '.join(map(str, a))}\n")
    with open(path + ".ans", "w") as f:
        f.write(f"{best(a)}\n")


data = sys.argv[1]
rng = random.Random(2026)
write(f"{data}/sample/1", [2, -3, 4, -1, 2, -5, 3])
write(f"{data}/sample/2", [-4, -2, -7])
for i in range(1, 5):
    n = rng.randint(1, 100)
    write(f"{data}/secret/g1/{i:02d}", [rng.randint(-1000, 1000) for _ in range(n)])
for i in range(1, 5):  # subtask 2 includes subtask 1
    for ext in ("in", "ans"):
        link = f"{data}/secret/g2/{i:02d}.{ext}"
        if not os.path.lexists(link):
            os.symlink(f"../g1/{i:02d}.{ext}", link)
write(f"{data}/secret/g2/05", [rng.randint(0, 10**9) for _ in range(50000)])
write(f"{data}/secret/g2/06", [rng.randint(-10**9, 10**9) for _ in range(50000)])
write(f"{data}/secret/g2/07", [10**9] * 25000 + [-1] + [10**9] * 24999)
