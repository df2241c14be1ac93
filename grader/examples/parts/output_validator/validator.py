"""Validator for 'parts': argv = input answer feedback_dir [plain|scored]; the
submission's output on stdin. In a scored group it reports k / k_max in
score_multiplier.txt. Exit 42 accepts, 43 rejects."""
import math
import sys

fb = sys.argv[3]


def reject(msg):
    with open(fb + "judgemessage.txt", "w") as f:
        f.write(msg + "\n")
    sys.exit(43)


s = int(open(sys.argv[1]).read().split()[0])
tokens = sys.stdin.read(50_000_000).split()
try:
    nums = [int(t) for t in tokens]
except ValueError:
    reject("the output has a token that is not an integer")
if not nums or nums[0] != len(nums) - 1 or nums[0] < 1:
    reject("expected k and then k numbers")
parts = nums[1:]
if min(parts) < 1 or len(set(parts)) != len(parts):
    reject("the parts must be distinct positive integers")
if sum(parts) != s:
    reject(f"the parts add up to {sum(parts)}, not {s}")
if "scored" in sys.argv[4:]:
    k_max = (math.isqrt(8 * s + 1) - 1) // 2
    with open(fb + "score_multiplier.txt", "w") as f:
        f.write(f"{len(parts) / k_max:.9f}\n")
sys.exit(42)
