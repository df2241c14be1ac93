import statistics, sys
xs = [float(t) for t in sys.stdin.read().split()[1:]]
print(statistics.fmean(xs), statistics.pstdev(xs))
