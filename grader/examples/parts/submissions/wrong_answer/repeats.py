s = int(input())
print(s, *([1] * s)) if s <= 10**6 else print(1, s)
