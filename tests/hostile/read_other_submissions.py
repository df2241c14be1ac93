# expect: AC
# Looks everywhere visible for other submissions' files, the host's state dir
# and the problem packages.
import os
found = []
for top in ["/", "/var/lib/gradeline", "/work/..", "/proc/1/root", "/root", "/home"]:
    try:
        entries = os.listdir(top)
    except OSError:
        continue
    for e in entries:
        if e.startswith("sub-") or e in ("examples", "gradeline", "images", "submissions"):
            found.append(os.path.join(top, e))
for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    if any(w in target for w in ("secret", "data/", ".in", "examples", "fixtures")):
        found.append(f"fd {fd} -> {target}")
print("PWNED:", found) if found else print(3)
