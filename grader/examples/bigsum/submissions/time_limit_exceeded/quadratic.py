# Recomputes every prefix sum from scratch: O(n^2).
import sys
data = sys.stdin.read().split()
n = int(data[0]); a = list(map(int, data[1:1 + n]))
best = 0
for i in range(n):
    s = 0
    for j in range(i + 1):
        s += a[j]
    best = s
print(best)
