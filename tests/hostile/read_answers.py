# expect: WA
# problem: secretanswer
# The answer cannot be computed; only found. Search the visible tree (for 0.6 s
# of CPU and at most 1 s of wall time -- reading files waits for the disk on a
# loaded machine -- so that "not found" is a WA, not a TLE).
import os, time
deadline, wall_deadline = time.process_time() + 0.6, time.monotonic() + 1.0
def over():
    return time.process_time() > deadline or time.monotonic() > wall_deadline
for root, dirs, files in os.walk("/"):
    if root.startswith(("/proc", "/sys", "/dev")) or over():
        dirs[:] = []
        continue
    for f in files:
        if over():
            break
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
