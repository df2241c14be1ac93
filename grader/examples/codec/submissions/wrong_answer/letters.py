mode, data = open(0).read().split()
print(data)  # not digits: rejected in the first pass
