import math
s = int(input())
k = (math.isqrt(8 * s + 1) - 1) // 2
parts = list(range(1, k))
parts.append(s - sum(parts))  # the last part is at least k: still distinct
print(len(parts), *parts)
