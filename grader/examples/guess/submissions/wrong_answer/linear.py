# Counts up from 1: finds small numbers, runs out of queries on the rest.
y = 1
while True:
    print("?", y, flush=True)
    if input().strip() == "=":
        break
    y += 1
