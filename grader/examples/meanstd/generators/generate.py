"""Deterministic test data for meanstd (run from the package dir)."""
import math
import random
from pathlib import Path

def write(path, xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))
    Path(path).write_text(f"{len(xs)}\n" + "\n".join(f"{x:.6f}" for x in xs) + "\n")
    Path(path).with_suffix(".ans").write_text(f"{m:.9f} {sd:.9f}\n")

rng = random.Random(7)
write("data/sample/1.in", [1.0, 2.0, 3.0, 4.0])
for i, n in enumerate([1, 10, 100, 1000, 10000], 1):
    write(f"data/secret/{i:02d}.in", [rng.uniform(-1000, 1000) for _ in range(n)])
