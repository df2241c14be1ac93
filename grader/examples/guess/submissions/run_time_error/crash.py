print("? 500000000", flush=True)
r = input()
raise SystemExit(3)
