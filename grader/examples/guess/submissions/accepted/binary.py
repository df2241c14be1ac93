lo, hi = 1, 10**9
while lo <= hi:
    mid = (lo + hi) // 2
    print("?", mid, flush=True)
    r = input().strip()
    if r == "=":
        break
    if r == "<":
        hi = mid - 1
    else:
        lo = mid + 1
