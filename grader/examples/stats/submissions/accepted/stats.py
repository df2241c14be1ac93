from collections import Counter


def mean(xs):
    if not xs:
        raise ValueError("mean of nothing")
    return sum(xs) / len(xs)


def median(xs):
    if not xs:
        raise ValueError("median of nothing")
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def mode(xs):
    counts = Counter(xs)
    best = max(counts.values())
    return min(x for x, c in counts.items() if c == best)
