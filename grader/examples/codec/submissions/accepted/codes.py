mode, data = open(0).read().split()
if mode == "encode":
    print("".join(f"{ord(c) - 96:02d}" for c in data))
else:
    print("".join(chr(int(data[i:i + 2]) + 96) for i in range(0, len(data), 2)))
