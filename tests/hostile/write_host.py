# expect: AC
# Tries to leave files on the host: /tmp and /var/tmp here are private or read-only.
import os
left = []
for d in ("/var/tmp", "/work", "/etc", "/usr", "/"):
    try:
        with open(os.path.join(d, "gradeline-hostile-marker"), "w") as f:
            f.write("x")
        left.append(d)
    except OSError:
        pass
print(f"PWNED: wrote into {left}") if left else print(3)
