# Backtracking search: exponential in the worst case and never finishes for large n.
import sys
sys.setrecursionlimit(1 << 20)
n = int(input())
used = [False] * (n + 1)
path = []
def go():
    if len(path) == n:
        return True
    for v in range(1, n + 1):
        if not used[v] and (not path or abs(path[-1] - v) != 1):
            used[v] = True; path.append(v)
            if go():
                return True
            used[v] = False; path.pop()
    return False
import time
if n > 500:
    while True:
        time.sleep(1)  # "waiting for a smarter idea": blocks forever (wall-clock TLE)
print(*path) if go() else print(-1)
