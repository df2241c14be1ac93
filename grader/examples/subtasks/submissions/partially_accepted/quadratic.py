# Every run tried: fine for subtask 1, far too slow for subtask 2.
n = int(input())
a = list(map(int, input().split()))
top = a[0]
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        top = max(top, s)
print(top)
