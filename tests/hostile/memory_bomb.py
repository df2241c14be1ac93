# expect: MLE
chunks = []
while True:
    chunks.append(bytearray(1 << 20))
