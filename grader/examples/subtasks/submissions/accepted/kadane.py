n = int(input())
cur = top = None
for x in map(int, input().split()):
    cur = x if cur is None or cur < 0 else cur + x
    top = cur if top is None or cur > top else top
print(top)
