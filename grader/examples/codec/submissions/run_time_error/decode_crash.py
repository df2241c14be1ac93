mode, data = open(0).read().split()
if mode == "encode":
    print("1" * len(data))
else:
    raise ValueError("cannot decode")
