# expect: AC
try:
    data = open("/etc/shadow").read()
    print("PWNED:", data[:200])
except OSError:
    print(3)
