def mean(xs):
    while True:
        pass


def median(xs):
    return sorted(xs)[len(xs) // 2]


def mode(xs):
    return xs[0]
