# Uses the sample standard deviation (n-1), not the population one.
import statistics, sys
xs = [float(t) for t in sys.stdin.read().split()[1:]]
print(statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)
