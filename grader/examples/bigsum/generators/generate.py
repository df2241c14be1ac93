"""Deterministic test data for bigsum (run from the package dir)."""
import random
from pathlib import Path

def write(path, nums):
    Path(path).write_text(f"{len(nums)}\n" + " ".join(map(str, nums)) + "\n")
    Path(path).with_suffix(".ans").write_text(f"{sum(nums)}\n")

rng = random.Random(20261122)
write("data/sample/1.in", [1, 2, 3])
write("data/sample/2.in", [-5, 10])
for i in range(1, 5):
    write(f"data/secret/small/{i:02d}.in", [rng.randint(-1000, 1000) for _ in range(rng.randint(1, 100))])
for i, n in enumerate([1000, 30000, 100000, 100000], 1):
    write(f"data/secret/large/{i:02d}.in", [rng.randint(-10**9, 10**9) if i % 2 else rng.randint(10**8, 10**9) for _ in range(n)])
