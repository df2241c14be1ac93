# expect: WA
# problem: secretanswer
# The answer cannot be computed; only found. Search the visible tree (for 0.6 s
# of CPU, so that "not found" is a WA, not a TLE).
import os, time
deadline = time.process_time() + 0.6
for root, dirs, files in os.walk("/"):
    if root.startswith(("/proc", "/sys", "/dev")) or time.process_time() > deadline:
        dirs[:] = []
        continue
    for f in files:
        try:
            with open(os.path.join(root, f), "rb") as fh:
                data = fh.read(1 << 20)
        except OSError:
            continue
        if b"ANSWER-" in data and b"ANSWER-\"" not in data:
            print(data.decode(errors="replace").strip())
            raise SystemExit(0)
# The places a careless judge would leave it:
for p in ("/judge/data/answer", "/work/1.ans", "/data/secret/1.ans", "/tmp/1.ans"):
    try:
        print(open(p).read().strip()); raise SystemExit(0)
    except OSError:
        pass
print("not found")
