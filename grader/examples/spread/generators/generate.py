"""Deterministic test data for spread (run from the package dir)."""
from pathlib import Path

def answer(n):
    if n == 1:
        return [1]
    if n in (2, 3):
        return [-1]
    return list(range(2, n + 1, 2)) + list(range(1, n + 1, 2))

def write(path, n):
    Path(path).write_text(f"{n}\n")
    Path(path).with_suffix(".ans").write_text(" ".join(map(str, answer(n))) + "\n")

write("data/sample/1.in", 5)
write("data/sample/2.in", 3)
for i, n in enumerate([1, 2, 4, 7, 1000, 100000], 1):
    write(f"data/secret/{i:02d}.in", n)
