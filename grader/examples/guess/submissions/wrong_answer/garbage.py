print("what is the number?", flush=True)
print(input())
